#!/usr/bin/env bash
# What apply touches is exactly what was asked, on real Slurm:
#  - `apply PLAN --limit` applies only the plan's matching nodes (a Slurm host list with a comma
#    inside brackets, as plumb prints them), says which it leaves out, and refuses a pattern that
#    names no node of the plan before anything is touched;
#  - a waiver (nodes as a host list) shows the waived key in plan, and apply never changes it;
#  - `apply --ref` asks under exactly the text `plumb plan` prints;
#  - while a drain waits for a job, plain output has a heartbeat naming the job, and
#    `plumb runs RUN` shows the node's step and the job it waits for;
#  - drift names the applied commit for nodes in sync;
#  - a saved plan applied from another directory, without --repo, checks host keys against
#    the known_hosts its own repo names (relative to that repo).
. "$(dirname "$0")/lib/apply.sh"
ap_up 4 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 2
canary: 0
max_failures: 0
health: [ \"nvidia-smi -L\" ]
health_timeout: 1m"
# The upgrade stack plus a sysctl pin; a waiver keeps n2 and n4 at their own swappiness.
{ cat "$AP_DATA/gpu-2025q4.yaml"; echo "sysctl: { vm.swappiness: 10 }"; } >"$REPO/stacks/gpu-2025q4.yaml"
cat >"$REPO/waivers.yaml" <<'YAML'
waivers:
  - { nodes: "n[2,4]", keys: "sysctl.vm.swappiness", reason: "latency trial INC-77", owner: alice, expires: "2099-12-31" }
YAML
git -C "$REPO" add -A && git -C "$REPO" commit -qm "swappiness pin, waiver for n2,n4"
# known_hosts named relative to the repo, as a real cluster repo carries it: `apply PLAN.json`
# run from another directory, without --repo, must check host keys against the plan's repo
# (a regression: it once resolved them against the current directory).
cp "$TB_RUN/client/known_hosts" "$REPO/known_hosts"
sed -i "s|known_hosts: $TB_RUN/client/known_hosts|known_hosts: known_hosts|" "$REPO/inventory.yaml"
grep -q "known_hosts: known_hosts," "$REPO/inventory.yaml"
git -C "$REPO" add -A && git -C "$REPO" commit -qm "known_hosts in the repo"
mkdir -p "$AP_TMP/elsewhere"
swap_of() { "$TB" ssh "$1" sysctl -n vm.swappiness; }

plumb_in plan --repo "$REPO" --out "$AP_TMP/plan.json" >"$AP_TMP/plan.txt" 2>&1 || true
check "plan shows the waived key on n[2,4] with its reason" \
  bash -c "grep -q '= sysctl.vm.swappiness: 60 -> 10  waived until 2099-12-31: latency trial INC-77' $AP_TMP/plan.txt"
check "plan counts the waived keys" grep -q "2 waived key(s) left as they are" "$AP_TMP/plan.txt"
check "the plan file carries the waived changes" pyj "$AP_TMP/plan.json" \
  'sorted(w["node"] for w in j["waived"]) == ["n2","n4"] and all(a["action"]["module"]=="sysctl" for w in j["waived"] for a in w["changes"])'
check "no planned action touches swappiness on n2/n4" pyj "$AP_TMP/plan.json" \
  'not any(a["key"]=="sysctl.vm.swappiness" for n in j["nodes"] if n["node"] in ("n2","n4") for a in n["actions"])'

# A pattern naming no node of the plan is refused before anything happens.
apply "$AP_TMP/plan.json" --limit 'n[7,9]' --auto-approve
check "--limit naming no planned node refused (rc=$RC)" test "$RC" = 1
cat "$AP_TMP/err"
check "  the refusal names the term" grep -q "'n\[7,9\]' matches no node of the plan" "$AP_TMP/err"
check "  nothing installed anywhere" test "$(cat "$TB_RUN"/nodes/*/state/events.log | grep -c 'apt-get install' || true)" = 0

# --limit on the saved plan: only n1 and n3, with a job on n1 that the drain waits for.
jid=$(job_on n1 12)
run_args=(--limit 'n[1,3]' --auto-approve --reboot-timeout 120 --poll-max-ms 1000)
(cd "$AP_TMP/elsewhere" && exec "$TB" exec env PLUMB_JOURNAL="$JOURNAL" PLUMB_HEARTBEAT_S=1 \
  "$PLUMB" apply "$AP_TMP/plan.json" "${run_args[@]}") >"$AP_TMP/out" 2>"$AP_TMP/err" &
bg=$!
# While n1 waits for the job: `plumb runs RUN` shows its step and the job.
seen_runs=0
for _ in $(seq 1 200); do
  run=$(plumb_in runs --format json 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j[0]["id"] if j else "")' 2>/dev/null || true)
  if [[ -n $run ]] && plumb_in runs "$run" 2>/dev/null | grep -q "n1 .*wait-drained.*$jid (root: wrap"; then
    seen_runs=1; break
  fi
  sleep 0.2
done
set +e; wait "$bg"; RC=$?; set -e
check "apply --limit exits 0 (rc=$RC)" test "$RC" = 0 || { tail -5 "$AP_TMP/out"; cat "$AP_TMP/err"; }
check "plumb runs RUN showed n1 waiting for job $jid" test "$seen_runs" = 1
check "the plain output has a heartbeat naming the job (and its time limit)" \
  grep -q "n1 *wait-drained *waiting .*: waiting for 1 job(s): $jid (root: wrap, " "$AP_TMP/out"
check "apply says which nodes of the plan it leaves out" grep -q "left out: n\[2,4\]" "$AP_TMP/err"
for n in n1 n3; do check "$n upgraded" test "$(driver_of $n)" = 550.90.07; done
for n in n2 n4; do
  check "$n untouched (no install, no drain)" bash -c "! grep -q 'apt-get install' $TB_RUN/nodes/$n/state/events.log && ! grep -q 'plumb:' <<<\"\$($TB exec sinfo -h -N -n $n -o %E)\""
done
check "n1 swappiness set to 10" test "$(swap_of n1)" = 10

# The rest through a fresh apply --ref: the prompt's text is plumb plan's text.
plumb_in plan --repo "$REPO" >"$AP_TMP/plan2.txt" 2>/dev/null || true
"$TB" exec env PLUMB_JOURNAL="$JOURNAL" "$PLUMB" apply --repo "$REPO" --ref HEAD </dev/null \
  >"$AP_TMP/prompt.txt" 2>"$AP_TMP/prompt.err" && RC=0 || RC=$?
check "apply --ref without a terminal or --auto-approve refuses (rc=$RC)" test "$RC" = 1
strip() { sed -e '1s/, [0-9T:.-]*Z$//' -e '2s/^facts gathered .*$/facts gathered (time)/' "$1"; }   # each run's own times
check "apply --ref shows exactly plumb plan's text above the refusal" \
  diff <(strip "$AP_TMP/plan2.txt") <(strip "$AP_TMP/prompt.txt")
apply --ref HEAD --auto-approve --reboot-timeout 120 --poll-max-ms 1000
check "apply --ref exits 0 (rc=$RC)" test "$RC" = 0
for n in n2 n4; do
  check "$n upgraded" test "$(driver_of $n)" = 550.90.07
  check "$n keeps its waived swappiness 60" test "$(swap_of $n)" = 60
done
check "no VIOLATION" test "$(violations)" = 0
plumb_in drift --repo "$REPO" --format json --out "$AP_TMP/drift.json" 2>/dev/null || true
head=$(git -C "$REPO" rev-parse HEAD)
check "drift: every node in sync or waived, each naming the applied commit" pyj "$AP_TMP/drift.json" \
  "all(n.get('marker_commit') == '$head' for n in j['nodes']) and j['summary']['drifted_nodes'] == 0"
ap_finish
