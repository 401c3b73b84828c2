#!/usr/bin/env bash
# plan and drift against a live testbed (4 nodes, real sshd; Slurm is left out to keep this
# test light: the scheduler read is covered by tests/plans/observe/plan_run_test.cc):
#   - the baseline stack plans to nothing (exit 0 with --detailed-exitcode);
#   - an upgrade commit plans the driver/CUDA/DCGM change on every node, collapsed, with its
#     disruption summary (exit 2), and the plan file is written;
#   - after an "apply" at the baseline (the marker) a sysctl changed by hand on one node shows in
#     drift as repair, while the upgrade's keys show as intent; every format validates;
#   - exit codes are exact (0 / 2 / 3 / 1), and plan/drift change nothing on the nodes.
. "$(dirname "$0")/lib/gather.sh"
. "$PLUMB_SRC/tests/third_party_schemas.sh"
D=$PLUMB_SRC/tests/integration/data/plan
GT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/plumb-it.XXXXXX")
export TB_RUN=$GT_TMP/$(basename "$GT_TMP")   # its netns is named after it: unique
trap gt_down EXIT
"$TB" up 4 >/dev/null
REPO=$GT_TMP/repo
cp "$D/baseline.yaml" "$GT_TMP/h100.yaml"
"$TB" cluster-repo "$REPO" --stack "$GT_TMP/h100.yaml" --rollout "$D/rolling.yaml" >/dev/null
BASE=$(git -C "$REPO" rev-parse HEAD)
cp "$D/upgrade.yaml" "$REPO/stacks/h100.yaml"
gt_commit "upgrade: R550 + CUDA 12.4"
UP=$(git -C "$REPO" rev-parse HEAD)

run() { # run ARGS...: plumb in the testbed netns; stdout $OUT, stderr $ERR, rc $RC
  OUT=$GT_TMP/out ERR=$GT_TMP/err
  set +e
  "$TB" exec "$PLUMB" "$@" >"$OUT" 2>"$ERR"
  RC=$?
  set -e
}
rc_is() { [[ $RC == "$1" ]] || { echo "     exit $RC, wanted $1"; sed 's/^/     | /' "$OUT" "$ERR" | head -30; false; }; }
state_sum() { (cd "$TB_RUN/nodes" && find . -path '*/state/*' -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum); }
BEFORE=$(state_sum)

run plan --no-scheduler --repo "$REPO" --ref "$BASE" --detailed-exitcode
check "baseline plan: no changes (exit 0)" rc_is 0
check "baseline plan says so" contains "$OUT" "No changes: 4 node(s) in sync, 0 unreadable."

run plan --no-scheduler --repo "$REPO" --ref "$UP" --detailed-exitcode --out "$GT_TMP/plan.json"
check "upgrade plan: changes (exit 2)" rc_is 2
check "identical nodes collapsed" contains "$OUT" "~ n[1-4] (4 nodes)"
check "driver change with disruption and reason" grep -qE '~ nvidia.driver: 535.161.08 -> 550.90.07  \((reboot|drain), intent\)  stacks/h100.yaml:[0-9]+' "$OUT"
check "package change" contains "$OUT" "packages.datacenter-gpu-manager: 1:3.3.5 -> 1:3.3.7"
check "batches: canary first" grep -qE '^ +1\. canary +n1 ' "$OUT"
check "peak nodes out within max_unavailable 2" grep -qE '^Peak nodes out at once: [12] ' "$OUT"
check "estimated duration" grep -qE '^Estimated duration: ' "$OUT"
check "plan file written with the commit" grep -q "\"commit\": \"$UP\"" "$GT_TMP/plan.json"

# An apply at the baseline leaves its marker; then someone tunes a sysctl by hand on n2.
for n in n1 n2 n3 n4; do
  "$TB" ssh "$n" "mkdir -p /var/lib/plumb && printf '%s\n' '{\"commit\":\"$BASE\",\"run\":\"run-1\",\"time\":\"2026-11-29T00:00:00Z\"}' >/var/lib/plumb/marker.json"
done
sed -i 's/^vm.swappiness = .*/vm.swappiness = 10/' "$TB_RUN/nodes/n2/state/sysctl.conf"
BEFORE=$(state_sum)

run drift --repo "$REPO" --ref "$BASE"
check "drift at baseline: exit 2" rc_is 2
check "hand-made sysctl change is a repair" grep -qE '~ sysctl.vm.swappiness: 10 -> 60  \(repair\)' "$OUT"
check "only n2 drifted" grep -qE '^~ n2: 1 drifted' "$OUT"

run drift --repo "$REPO" --ref "$UP" --format json
check "drift at upgrade: exit 2" rc_is 2
check "upgrade keys are intent, the sysctl still repair" py '[(n["node"], k["key"], k["status"], k.get("reason")) for n in j["nodes"] for k in n["checks"] if (n["node"], k["key"]) in (("n1", "nvidia.driver"), ("n2", "sysctl.vm.swappiness"), ("n1", "sysctl.vm.swappiness"))] == [("n1", "nvidia.driver", "drift", "intent"), ("n1", "sysctl.vm.swappiness", "in_sync", None), ("n2", "sysctl.vm.swappiness", "drift", "repair")]'

run drift --repo "$REPO" --ref "$UP" --format junit --out "$GT_TMP/drift.xml"
check "junit: exit 2" rc_is 2
if xsd=$(third_party_schema junit-10.xsd "the JUnit XML schema"); then
  check "junit validates against junit-10.xsd" xmllint --noout --schema "$xsd" "$GT_TMP/drift.xml"
fi
run drift --repo "$REPO" --ref "$UP" --format sarif --out "$GT_TMP/drift.sarif"
check "sarif results point at the stack file" python3 -c '
import json,sys; s=json.load(open(sys.argv[1])); r=s["runs"][0]["results"]
assert s["version"]=="2.1.0" and r and all(x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]=="stacks/h100.yaml" for x in r)' "$GT_TMP/drift.sarif"
run drift --repo "$REPO" --ref "$UP" --format prom --out "$GT_TMP/drift.prom"
check "prom: n2 sysctl gauge is 1" grep -q 'plumb_drift{cluster="testbed",node="n2",module="sysctl"} 1' "$GT_TMP/drift.prom"
run drift --repo "$REPO" --ref "$UP" --format html --out "$GT_TMP/drift.html"
check "html written" grep -q 'class="cell s-drift"' "$GT_TMP/drift.html"

# A waiver for the hand tuning makes the baseline in sync again: 0, not 2.
printf 'waivers:\n  - { nodes: "n[2-3]", keys: "sysctl.*", reason: "tuning trial", owner: ops, expires: 2099-12-31 }\n' >"$REPO/waivers.yaml"
git -C "$REPO" checkout -q "$BASE" -- stacks/h100.yaml
git -C "$REPO" add -A && gt_commit "waive the tuning trial"
run drift --repo "$REPO" --ref HEAD
check "waived drift is in sync (exit 0)" rc_is 0

# On a terminal, plan and drift show a progress line while they read the nodes, as gather does
# (script(1) gives them one); in a pipe (every run above) they do not.
for args in "plan --no-scheduler" drift; do
  verb=${args%% *}
  # shellcheck disable=SC2086
  script -qec "$(printf '%q ' "$TB" exec "$PLUMB" $args --repo "$REPO")" /dev/null \
    </dev/null >"$GT_TMP/tty-$verb" 2>&1 || true
  check "$verb on a terminal: a progress line while reading (reading nodes: 4/4)" \
    grep -q "reading nodes: 4/4 nodes" "$GT_TMP/tty-$verb"
done
check "... and none into a pipe" bash -c "! grep -q 'reading nodes' '$ERR' '$OUT'"

check "plan and drift changed nothing on the nodes" test "$(state_sum)" = "$BEFORE"

# A node that cannot be read: partial (3) when nothing drifted, drift (2) wins otherwise.
"$TB" ctl poweroff n4 >/dev/null
sleep 1
BEFORE=$(state_sum)
run drift --repo "$REPO" --ref HEAD
check "unreadable node, no drift: exit 1" rc_is 1
run plan --no-scheduler --repo "$REPO" --ref "$UP" --detailed-exitcode
check "plan with an unreadable node and changes: exit 2, marked incomplete" rc_is 2
check "plan says incomplete" contains "$OUT" "PLAN INCOMPLETE"
run plan --no-scheduler --repo "$REPO" --ref no-such-ref --detailed-exitcode
check "bad ref: exit 1" rc_is 1

check "plan and drift changed nothing on the nodes (with one node off)" test "$(state_sum)" = "$BEFORE"
gt_finish
