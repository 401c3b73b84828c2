#!/usr/bin/env bash
# Firmware and BIOS through the rolling apply, the one door (issue 31), for every vendor mockup
# found in ../shared/redfish-mockups (each missing one is named and skipped; none found: exit 77).
# Per mockup: two testbed nodes with real Slurm, each with its own BMC of that mockup (the
# emulator in its vendor-neutral mode, linked to the node: a BMC reset reboots it, a reboot
# applies pending BIOS at POST). The repo changes a BIOS attribute on n1 and a firmware version
# on n2; `plumb apply` must converge both: each node drained once and returned to service, the
# firmware through its task, a reset, the version read back; the BIOS through a reboot and the
# BMC read back at verify; then `plumb drift` is clean and `plumb bmc apply` has nothing to do.
. "$(dirname "$0")/lib/apply.sh"
BMC=$PLUMB_SRC/tests/testbed/redfish/bmc
# mockup | n1's BIOS attribute=value | n2's firmware component | version | image (none: no BIOS)
VENDORS=(
  "public-rackmount1|ProcHyperthreading=Disabled|BMC|1.46.0|https://fw.example/BMC-1.46.0.bin"
  "XL675d_A100|WorkloadProfile=GeneralPowerEfficientCompute|System ROM|A47 v2.60|https://fw.example/System%20ROM-A47%20v2.60.bin"
  "OpenBMC-stock||5d0869c4|2.16.0|file:IMAGE_DIR/5d0869c4-2.16.0.bin"
  "EX235n|Core Performance Boost=Disabled|BIOS|ex235n.bios-1.2.2|https://fw.example/BIOS-ex235n.bios-1.2.2.bin"
  "Gigabyte|GBT0001=Disabled|BMC|12.85.0|http://fw.example/BMC-12.85.0.bin"
)
found=()
for v in "${VENDORS[@]}"; do
  m=${v%%|*}
  if "$BMC" mockups "$m" >/dev/null 2>&1; then found+=("$v"); else echo "PARTIAL SKIP: $m: mockup not in ../shared/redfish-mockups"; fi
done
((${#found[@]})) || { echo "skipped: no vendor mockup found"; exit 77; }

ap_up 2 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 1
canary: 0
max_failures: 0
health: [ \"nvidia-smi -L\" ]
health_timeout: 1m"
export TB_DOWNTIME=1
IMAGES=$AP_TMP/images
mkdir -p "$IMAGES"
echo image >"$IMAGES/5d0869c4-2.16.0.bin"
RF=$TB_RUN/redfish
drains_of() { # NODE: drain steps this journal recorded ok for NODE in run $1
  python3 - "$JOURNAL" "$1" "$2" <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute(
    "select count(*) from steps where run_id=? and node=? and step='drain' and outcome='ok'",
    (sys.argv[2], sys.argv[3])).fetchone()[0])
PY
}
bmc_state() { "$BMC" state --run "$RF" "$1"; }

first=1
vendor_no=0
for v in "${found[@]}"; do
  IFS='|' read -r mockup bios comp version image <<<"$v"
  image=${image//IMAGE_DIR/$IMAGES}
  echo "=== $mockup"
  [[ $first == 1 ]] || "$BMC" down --run "$RF" >/dev/null 2>&1 || true
  first=0
  "$BMC" up --tb --vendor "neutral:$mockup" >/dev/null 2>"$AP_TMP/bmc-up.err" ||
    { check "$mockup: bmc up" false; cat "$AP_TMP/bmc-up.err"; continue; }
  system=""
  [[ $mockup != EX235n ]] || system=", bmc_system: Node0"
  # The repo: each node's BMC, defaults.bmc, n1 in group "bios", n2 in group "fw".
  python3 - "$REPO/inventory.yaml" "$RF" "$system" <<'PY'
import re, sys
p, rf, system = sys.argv[1:]
urls = {l.split()[0]: l.split()[1] for l in open(rf + "/bmcs.txt") if l.strip()}
s = open(p).read()
s = re.sub(r"\n  bmc: .*", "", s)
s = s.replace("\nnodes:", '\n  bmc: { ca: %s/certs/ca.pem, credentials: "file:%s/credentials" }\nnodes:' % (rf, rf), 1)
def node(m):
    name = m.group(1)
    line = re.sub(r", bmc: [^,}]*(, bmc_system: [^,}]*)?", "", m.group(0))
    group = "bios" if name == "n1" else "fw"
    line = re.sub(r"groups: \[[^]]*\]", "groups: [%s]" % group, line)
    return line.replace(", rack:", ', bmc: "%s"%s, rack:' % (urls[name], system), 1)
s = re.sub(r"  - \{ name: (n\d+),.*\}", node, s)
s = re.sub(r"\ngroups:\n(  .*\n)*", "\ngroups:\n  bios: { stack: bios, rollout: rolling }\n  fw: { stack: fw, rollout: rolling }\n", s + "\n")
open(p, "w").write(s)
PY
  if [[ -n $bios ]]; then
    printf 'bios: { "%s": "%s" }\n' "${bios%%=*}" "${bios#*=}" >"$REPO/stacks/bios.yaml"
  else
    printf '{}\n' >"$REPO/stacks/bios.yaml"
  fi
  printf 'firmware: { "%s": "%s" }\nfirmware_images: { "%s": "%s" }\n' "$comp" "$version" "$comp" "$image" \
    >"$REPO/stacks/fw.yaml"
  rm -f "$REPO/stacks/gpu-2025q4.yaml"
  git -C "$REPO" add -A
  git -C "$REPO" -c user.name=t -c user.email=t@example.invalid commit -qm "$mockup: BIOS on n1, firmware on n2"
  plumb_in validate --repo "$REPO" >"$AP_TMP/validate.out" 2>&1 ||
    { check "$mockup: the repo validates" false; cat "$AP_TMP/validate.out"; continue; }

  if ((vendor_no++ % 2 == 0)); then
    apply --ref HEAD --auto-approve --reboot-timeout 180 --poll-max-ms 500
  else   # every other vendor through `plumb bmc apply`: the same engine, Redfish modules only
    set +e
    "$TB" exec env PLUMB_JOURNAL="$JOURNAL" "$PLUMB" bmc apply --repo "$REPO" --ref HEAD \
      --auto-approve --reboot-timeout 180 >"$AP_TMP/out" 2>"$AP_TMP/err"
    RC=$?
    set -e
  fi
  cp "$AP_TMP/out" "$AP_TMP/out-$mockup"
  check "$mockup: the rolling apply converges (rc=$RC)" test "$RC" = 0
  run=$(grep -o 'run [0-9]\{8\}-[0-9]\{6\}-[0-9a-f]\{4\}' "$AP_TMP/out" | head -1 | cut -d' ' -f2)
  if [[ -n $bios ]]; then
    check "$mockup: n1 drained once" test "$(drains_of "$run" n1)" = 1
    check "$mockup: n1's BIOS attribute applied (the BMC's Bios says so)" \
      bash -c "'$BMC' state --run '$RF' n1 | python3 -c 'import json,sys; d=json.load(sys.stdin); a=d[\"bios\"][\"current\"]; v=a.get(sys.argv[1]); v=v.get(\"current_value\", v) if isinstance(v, dict) else v; sys.exit(0 if v == sys.argv[2] else 1)' '${bios%%=*}' '${bios#*=}'"
  fi
  check "$mockup: n2 drained once" test "$(drains_of "$run" n2)" = 1
  check "$mockup: n2's firmware $comp at $version (read back)" \
    bash -c "'$BMC' state --run '$RF' n2 | grep -qF -- '$version'"
  check "$mockup: both back in service" bash -c "[[ \$('$TB' exec sinfo -h -N -n n1,n2 -o %T | sort -u) == idle ]]"
  check "$mockup: no VIOLATION" test "$(violations)" = 0
  set +e
  plumb_in drift --repo "$REPO" >"$AP_TMP/drift-$mockup" 2>&1
  drc=$?
  "$TB" exec env PLUMB_JOURNAL="$JOURNAL" "$PLUMB" bmc apply --repo "$REPO" --auto-approve \
    >"$AP_TMP/bmc-$mockup" 2>&1
  brc=$?
  set -e
  check "$mockup: drift is clean after (rc=$drc)" test "$drc" = 0
  check "$mockup: plumb bmc apply has nothing to do (rc=$brc)" \
    bash -c "test $brc = 0 && grep -q 'nothing to apply' '$AP_TMP/bmc-$mockup'"
  ((AP_FAIL == 0)) || { tail -30 "$AP_TMP/out-$mockup"; tail -10 "$AP_TMP/drift-$mockup"; }
done

# bmc reset is one power action: only on a node Slurm shows out of service with no job.
resets() { grep -c 'Actions/ComputerSystem.Reset' "$RF/requests.log" || true; }
before=$(resets)
set +e
"$TB" exec "$PLUMB" bmc reset n1 --repo "$REPO" >"$AP_TMP/reset1" 2>&1
rrc=$?
set -e
sleep 0.5   # the emulator flushes its request log every 0.2 s
check "bmc reset of n1 in service is refused (rc=$rrc)" test "$rrc" = 1
check "  saying it is in service and how to drain it" \
  bash -c "grep -q 'n1 is in service in slurm' '$AP_TMP/reset1' && grep -q 'scontrol update nodename=n1 state=drain' '$AP_TMP/reset1'"
check "  no reset was sent" test "$(resets)" = "$before"
slurm scontrol update nodename=n1 state=drain reason="bmc reset test"
set +e
"$TB" exec "$PLUMB" bmc reset n1 --repo "$REPO" >"$AP_TMP/reset2" 2>&1
rrc=$?
set -e
check "bmc reset of n1 drained with no job is sent (rc=$rrc)" test "$rrc" = 0
"$TB" ctl wait-up n1 >/dev/null 2>&1 || true
slurm scontrol update nodename=n1 state=resume || true
"$BMC" down --run "$RF" >/dev/null 2>&1 || true
ap_finish
