#!/usr/bin/env bash
# plumb plan against real Slurm (slurmctld + slurmd in the testbed): what the plan reads from the
# scheduler, and that it only reads.
#   - a job running on n2 is listed as blocking n2's drain, with its id, user and name;
#   - n4, drained by an admin, is marked so (plumb leaves it drained) and counted as already out:
#     with max_unavailable 2 the batches take one node at a time besides it, and the plan's
#     peak includes it;
#   - the same in the plan file (blocking_jobs, admin_drained, already_unavailable);
#   - `--no-scheduler` plans without that view and says so;
#   - nothing in Slurm changed: the job still runs, n4 keeps the admin's reason, the others idle.
. "$(dirname "$0")/lib/apply.sh"
ap_up 4 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 2
canary: 1
max_failures: 0"
slurm scontrol update nodename=n4 state=drain reason="RMA gpu3"
jid=$(job_on n2 300)
check "a job runs on n2 before the plan" test "$(slurm squeue -h -j "$jid" -o %T)" = RUNNING
sinfo_before=$(slurm sinfo -h -N -o '%N %T %E' | sort)

run_plan() { # ARGS...: plumb plan in the testbed; stdout -> $AP_TMP/out, stderr -> $AP_TMP/err
  set +e
  "$TB" exec "$PLUMB" plan --repo "$REPO" --ref HEAD --detailed-exitcode "$@" \
    >"$AP_TMP/out" 2>"$AP_TMP/err"
  RC=$?
  set -e
}
run_plan --out "$AP_TMP/plan.json"
check "plan with changes exits 2 (rc=$RC)" test "$RC" = 2
check "the job on n2 blocks its drain, named by id" grep -qE "^  n2: $jid \(" "$AP_TMP/out"
check "only n2 has a blocking job" test "$(sed -n '/^Jobs that block a drain now:/,/^$/p' "$AP_TMP/out" | grep -c '^  n')" = 1
check "n4 is shown as drained by an admin" grep -q "^Drained by an admin (plumb will leave them drained): n4" "$AP_TMP/out"
check "peak nodes out counts n4: 2 (n4 + one at a time)" grep -q "^Peak nodes out at once: 2 " "$AP_TMP/out"
check "no scheduler warning when Slurm was read" bash -c "! grep -q 'scheduler not read' '$AP_TMP/out' '$AP_TMP/err'"
check "plan file: n2's blocking job" pyj "$AP_TMP/plan.json" \
  "[b['node'] for b in j['blocking_jobs']] == ['n2'] and j['blocking_jobs'][0]['jobs'][0].startswith('$jid ')"
check "plan file: n4 admin-drained and already unavailable" pyj "$AP_TMP/plan.json" \
  "[(n['node'], n['admin_drained'], n['already_unavailable']) for n in j['nodes'] if n['admin_drained'] or n['already_unavailable']] == [('n4', True, True)]"
check "plan file: no batch holds more than one node besides n4" pyj "$AP_TMP/plan.json" \
  "all(len([x for x in b['nodes'] if x != 'n4']) <= 1 for b in j['batches'])"

run_plan --no-scheduler
check "--no-scheduler still plans (rc=$RC)" test "$RC" = 2
check "--no-scheduler says what it did not count" grep -q "scheduler not read (--no-scheduler)" "$AP_TMP/out" "$AP_TMP/err"
check "--no-scheduler lists no blocking job" bash -c "! grep -q '^Jobs that block a drain now:' '$AP_TMP/out'"

check "plan changed nothing in Slurm (states and reasons as before)" \
  test "$(slurm sinfo -h -N -o '%N %T %E' | sort)" = "$sinfo_before"
check "the job still runs" test "$(slurm squeue -h -j "$jid" -o %T)" = RUNNING
check "no node was touched (no install, no reboot in events.log)" \
  test "$(cat "$TB_RUN"/nodes/*/state/events.log | grep -cE 'apt-get install|reboot requested' || true)" = 0
slurm scancel "$jid" || true
ap_finish
