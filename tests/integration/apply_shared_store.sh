#!/usr/bin/env bash
# Applies from two "machines" (two processes with different local journals, PLUMB_JOURNAL) that
# share one PostgreSQL store (--store postgresql://...), on real Slurm:
#  - started at once, they see each other: one takes the cluster lock and applies, the other is
#    refused (apply.locked: "is locked by run R (host H, pid P)") and changes nothing;
#  - the PostgreSQL server restarted in the middle of the run: the apply waits for it and
#    finishes; every node installed and rebooted exactly once (never twice), all converged;
#  - the history is one: `plumb runs` and `plumb history --verify` from the other "machine"
#    show the run and verify its chain.
# Runs beside a PostgreSQL server of its own (tests/store/with_postgres.sh).
if [[ -z ${PLUMB_TEST_PG_HOST:-} ]]; then
  exec bash "${PLUMB_SRC:?}/tests/store/with_postgres.sh" bash "$0" "$@"
fi
. "$(dirname "$0")/lib/apply.sh"
ap_up 4 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 1
canary: 0
max_failures: 0
health: [ \"nvidia-smi -L\" ]
health_timeout: 1m"
STORE=$PLUMB_TEST_STORE
pg_ctl() { $PLUMB_TEST_PG_AS "$PLUMB_TEST_PG_CTL" -D "$PLUMB_TEST_PG_DATA" "$@"; }
start_apply() { # LOCAL-JOURNAL OUT
  "$TB" exec env PLUMB_JOURNAL="$1" PLUMB_STORE_RETRY_S=120 "$PLUMB" apply --store "$STORE" \
    --repo "$REPO" --ref HEAD --auto-approve --reboot-timeout 120 --poll-max-ms 1000 \
    >"$2" 2>"$2.err" &
}
start_apply "$AP_TMP/runner1.db" "$AP_TMP/r1"; p1=$!
start_apply "$AP_TMP/runner2.db" "$AP_TMP/r2"; p2=$!
# The one refused ends at once; the other holds the lock. Restart the server once the holder
# is in the middle of its work: it has installed on a node.
# (grep reads the files itself: `cat | grep -q` under pipefail fails when grep's early exit
# sends cat SIGPIPE, which a loaded machine made happen once.)
mid() { grep -qs 'apt-get install nvidia-driver-550' "$TB_RUN"/nodes/*/state/events.log; }
for _ in $(seq 1 900); do mid && break; sleep 0.2; done
check "the holder was installing on a node when the server restarted" mid
pg_ctl -m fast -w -t 60 restart -o "-k $PLUMB_TEST_PG_HOST -c listen_addresses='' -p $PLUMB_TEST_PG_PORT -c fsync=off" >/dev/null
check "the PostgreSQL server restarted mid-run" pg_ctl status
set +e; wait "$p1"; rc1=$?; wait "$p2"; rc2=$?; set -e
if grep -q "is locked by run" "$AP_TMP/r1.err"; then
  loser=r1 rcl=$rc1 rcw=$rc2 winner=r2
else
  loser=r2 rcl=$rc2 rcw=$rc1 winner=r1
fi
check "one apply ran to the end (exit $rcw)" test "$rcw" = 0
check "the other was refused by the shared lock (exit $rcl), naming the holder" \
  bash -c "test $rcl != 0 && grep -q 'cluster testbed is locked by run .* (host ' '$AP_TMP/$loser.err'"
for i in 1 2 3 4; do
  n=n$i
  check "$n: installed once and rebooted once (the restart made nothing run twice)" \
    test "$(count_events $n 'apt-get install nvidia-driver-550')$(count_events $n 'reboot requested')" = 11
  check "$n converged" test "$(driver_of $n)" = 550.90.07
  check "$n back in service" test "$(state_of $n)" = idle
done
check "no VIOLATION" test "$(violations)" = 0
# One history, whichever machine asks.
"$TB" exec env PLUMB_JOURNAL="$AP_TMP/runner2.db" "$PLUMB" runs --store "$STORE" --format json >"$AP_TMP/runs.json"
check "plumb runs on the store shows the run, done" \
  pyj "$AP_TMP/runs.json" 'len(j) == 1 and j[0]["outcome"] == "done"'
set +e
"$TB" exec "$PLUMB" history --store "$STORE" --verify >"$AP_TMP/verify" 2>&1
vrc=$?
set -e
check "the store's chain verifies after the restart (exit $vrc)" test "$vrc" = 0
check "the local journals were never written" bash -c "! test -s '$AP_TMP/runner1.db' && ! test -s '$AP_TMP/runner2.db'"
if ((AP_FAIL > 0)); then
  for r in r1 r2; do echo "--- $r:"; tail -25 "$AP_TMP/$r"; echo "--- $r stderr:"; tail -10 "$AP_TMP/$r.err"; done
  cat "$AP_TMP/verify"
fi
grep -h "cluster lock\|journal" "$AP_TMP/$winner.err" | sed 's/^/     (holder) /' | head -5 || true
ap_finish
