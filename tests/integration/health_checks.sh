#!/usr/bin/env bash
# Health checks as modules, on real sshd and Slurm with the testbed's dcgmi, all_reduce_perf,
# nvidia-smi and perfquery fakes (issue 15):
#   - `plumb health` runs what the stack pins under `health:` on every node and names each
#     failure with its test, GPU and value (n2: DCGM memory on GPU 3; n3: NCCL bus bandwidth
#     below the pin), exit 2; JSON and JUnit carry the same; it is read-only (no node changed,
#     no Slurm state changed);
#   - a rolling upgrade (max_unavailable 2, max_failures 1) runs the same checks as its health
#     step: n2 and n3 fail there after their change, stay drained with the failing test in their
#     Slurm reason, and count against max_failures: the second failure halts the run before n4;
#   - n4 runs DCGM 4.5 (its discovery header says "(Active)") and passes like n1.
. "$(dirname "$0")/lib/apply.sh"
ap_up 4 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 2
max_failures: 1
health_timeout: 5m"
cat "$AP_DATA/gpu-2025q4.yaml" - >"$AP_TMP/gpu-health.yaml" <<'YAML'
health:
  dcgm: { level: 2 }
  nccl_bw: { min_busbw_gbps: 350 }
  gpu_health: { max_uncorrected_ecc: 0 }
YAML
REPO=$AP_TMP/repo-health
"$TB" cluster-repo "$REPO" --stack "$AP_TMP/gpu-health.yaml" --rollout "$AP_TMP/rolling.yaml" >/dev/null
"$TB" state n2 dcgm_fail=memory:3 >/dev/null
"$TB" state n3 nccl_busbw=212.5 >/dev/null
# n4's dcgmi is DCGM 4.5's: "8 GPUs found (Active)." heads its discovery table.
"$TB" state n4 dcgm_version=4.5.0 >/dev/null

health() { # health ARGS...: plumb health in the testbed; stdout $AP_TMP/out, stderr $AP_TMP/err, $RC
  set +e
  "$TB" exec env PLUMB_JOURNAL="$JOURNAL" "$PLUMB" health --repo "$REPO" "$@" >"$AP_TMP/out" 2>"$AP_TMP/err"
  RC=$?
  set -e
}
states() { slurm sinfo -h -N -o '%N %T %E' | sort; }
changes() { cat "$TB_RUN"/nodes/*/state/events.log | grep -cE 'apt-get install|systemctl (start|stop|enable|disable|restart)|reboot requested|sysctl ' || true; }

before_states=$(states)
before_changes=$(changes)
health
check "plumb health: a failed check exits 2 (rc=$RC)" test "$RC" = 2
check "n1 passes" grep -q '^n1: pass' "$AP_TMP/out"
check "n4 passes on DCGM 4.5 (its '8 GPUs found (Active).' read)" grep -q '^n4: pass' "$AP_TMP/out"
check "n2 fails DCGM memory on GPU 3" grep -qE '^  FAIL dcgm: .*[Mm]emory.*GPU 3' "$AP_TMP/out"
# The fake's curve puts the largest size within a few GB/s of the knob.
check "n3 fails the NCCL bus bandwidth with its value" grep -qE '^  FAIL nccl_bw: .*: 21[0-9]\.[0-9]+ \(min 350' "$AP_TMP/out"
check "the summary counts them" grep -q '4 node(s): 2 passed, 0 warned, 2 failed, 0 unreachable' "$AP_TMP/out"

health --format json
cp "$AP_TMP/out" "$AP_TMP/health.json"
check "json: the same verdicts" pyj "$AP_TMP/health.json" '[n["verdict"] for n in j["nodes"]] == ["pass", "fail", "fail", "pass"]'
check "json: n3's measured bandwidth against its threshold" pyj "$AP_TMP/health.json" \
  'any(c["module"] == "nccl_bw" and c["status"] == "fail" and abs(c["measured"] - 212.5) < 5 and c["threshold"]["min"] == 350 for c in j["nodes"][2]["checks"])'
check "json: every pinned module ran on n1" pyj "$AP_TMP/health.json" \
  'set(j["nodes"][0]["modules"]) == {"dcgm", "nccl_bw", "gpu_health"}'

health --format junit --out "$AP_TMP/health.xml"
check "junit: two failures" grep -q 'failures="2"' "$AP_TMP/health.xml"
XSD=${PLUMB_THIRD_PARTY_SCHEMAS:-$PLUMB_SRC/../shared/third-party-schemas}/junit-10.xsd
if [[ -f $XSD ]] && command -v xmllint >/dev/null; then
  check "junit validates against junit-10.xsd" xmllint --noout --schema "$XSD" "$AP_TMP/health.xml"
else
  echo "skip junit-10.xsd validation (no ../shared/third-party-schemas/junit-10.xsd or xmllint)"
fi
check "plumb health changed no node" test "$(changes)" = "$before_changes"
check "plumb health changed no Slurm state" test "$(states)" = "$before_states"

apply --ref HEAD --auto-approve --reboot-timeout 120 --poll-max-ms 1000
check "the rollout fails (rc=$RC)" test "$RC" = 1
d1=$(driver_of n1) s1=$(state_of n1) s2=$(state_of n2) s3=$(state_of n3)
r2=$(reason_of n2) r3=$(reason_of n3)
check "n1 upgraded and back in service ($d1, $s1)" test "$d1 $s1" = "550.90.07 idle"
check "n2 stays drained ($s2)" test "${s2#drain}" != "$s2"
check "n2's reason names the health step, DCGM's test and GPU 3 ($r2)" \
  bash -c "[[ '$r2' == plumb:*:failed:health:checks:* && '$r2' == *dcgm* && '$r2' == *'GPU 3'* ]]"
check "n3 stays drained ($s3), its reason names the bandwidth ($r3)" \
  bash -c "[[ '$s3' == drain* && '$r3' == *nccl_bw* && '$r3' == *'< 350'* ]]"
check "two failures are more than max_failures (1): the run halts" \
  grep -q '2 node(s) failed, more than max_failures (1)' "$AP_TMP/out" "$AP_TMP/err"
check "n4 was not touched" bash -c "! grep -q 'apt-get install' $TB_RUN/nodes/n4/state/events.log"
check "no VIOLATION" test "$(violations)" = 0
ap_finish
