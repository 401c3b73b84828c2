#!/usr/bin/env bash
# kill -9 of plumb apply at 24 distinct points across the steps (probe, drain, wait, install,
# reboot, wait for boot, verify, health, marker, return to service; intent and outcome of each),
# each followed by `plumb apply --resume`. At the end every node has converged, each
# non-idempotent action ran exactly once (events.log: one driver install, one CUDA install, one
# NCCL install, one reboot per node), nothing changed under a job, and at no point was a node
# left drained by plumb without a journal record.
. "$(dirname "$0")/lib/apply.sh"
ap_up 3 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 1
canary: 1
max_failures: 0
health: [ \"nvidia-smi -L\" ]
health_timeout: 1m"
export PLUMB_TEST_HOOKS=1
points=(probe.intent probe.outcome claim.outcome drain.intent drain.outcome wait-drained.intent
        wait-drained.outcome apply.intent apply.outcome apply.intent:2 apply.outcome:3
        reboot.intent reboot.outcome wait-boot.intent wait-boot.outcome verify.intent
        verify.outcome health.intent health.outcome marker.intent marker.outcome
        resume.intent resume.outcome drain.intent reboot.outcome)
orphans() { # nodes drained by plumb that the journal has no step for
  python3 - "$JOURNAL" "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
known = {r[0] for r in db.execute("select distinct node from steps")}
for line in sys.argv[2].splitlines():
    node, _, reason = line.partition(" ")
    if reason.startswith("plumb:") and node not in known:
        print(node)
PY
}
crashed=0 orphan_seen=0 first=1
for p in "${points[@]}"; do
  point=${p%%:*} nth=1
  [[ $p == *:* ]] && nth=${p##*:}
  if ((first)); then
    "$TB" exec env PLUMB_CRASH_AT="$point:$nth" PLUMB_JOURNAL="$JOURNAL" "$PLUMB" apply \
      --repo "$REPO" --ref HEAD --auto-approve --poll-max-ms 500 \
      >"$AP_TMP/out" 2>"$AP_TMP/err" && rc=0 || rc=$?
    first=0
  else
    # The run by its id: once it is done (the points can outlast it), --resume RUN says so, 0.
    run=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select id from runs").fetchone()[0])' "$JOURNAL")
    "$TB" exec env PLUMB_CRASH_AT="$point:$nth" PLUMB_JOURNAL="$JOURNAL" "$PLUMB" apply \
      --repo "$REPO" --resume "$run" --reboot-grace 8 --poll-max-ms 500 \
      >"$AP_TMP/out" 2>"$AP_TMP/err" && rc=0 || rc=$?
  fi
  if [[ $rc == 137 ]]; then crashed=$((crashed + 1)); fi
  echo "  crash point $p: rc=$rc"
  o=$(orphans "$("$TB" exec sinfo -h -N -o '%N %E')")
  [[ -z $o ]] || { orphan_seen=1; echo "  drained without a journal record: $o"; }
done
check "plumb was killed at >= 20 distinct points ($crashed)" test "$crashed" -ge 20
check "no node was ever drained by plumb without a journal record" test "$orphan_seen" = 0
"$TB" exec env PLUMB_JOURNAL="$JOURNAL" "$PLUMB" apply --repo "$REPO" --resume "$run" --reboot-grace 8 \
  --poll-max-ms 500 >"$AP_TMP/out" 2>"$AP_TMP/err" && RC=0 || RC=$?
check "the last --resume finishes the run (rc=$RC)" test "$RC" = 0
for n in n1 n2 n3; do
  check "$n converged to driver 550.90.07" test "$(driver_of $n)" = 550.90.07
  check "$n: driver installed once" test "$(count_events $n 'apt-get install nvidia-driver-550')" = 1
  check "$n: CUDA installed once" test "$(count_events $n 'apt-get install cuda-toolkit-12-4')" = 1
  check "$n: NCCL installed once" test "$(count_events $n 'apt-get install libnccl2')" = 1
  check "$n: rebooted once" test "$(count_events $n 'reboot requested')" = 1
  check "$n back in service" test "$(state_of $n)" = idle
done
check "no VIOLATION" test "$(violations)" = 0
check "no claim left in any node's comment (a crash right after one was resumed)" \
  bash -c "! '$TB' exec scontrol show node -o | grep -q 'plumb-claim'"
plumb_in runs --format json >"$AP_TMP/runs.json"
check "the journal has one run, done" pyj "$AP_TMP/runs.json" 'len(j) == 1 and j[0]["outcome"] == "done"'
ap_finish
