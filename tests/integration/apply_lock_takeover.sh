#!/usr/bin/env bash
# The lock holder dies on another machine; this one takes the run over once its lock expires.
# Two "machines" share one PostgreSQL store: runner-b is a process in its own UTS namespace
# (hostname runner-b, so plumb records that host as the lock's owner and cannot check its pid
# from here); this host is the testbed's namespace as usual.
#  - runner-b applies with --lock-ttl 20s and is killed -9 mid-run (after n1's reboot);
#  - from here, --resume RUN is refused while the lock lasts, naming runner-b and its pid, with
#    the hint to wait for expiry or confirm the death (--force-unlock --dead-owner); a plain
#    --force-unlock without --dead-owner is refused too;
#  - --resume RUN, retried, takes over only once the lock's expiry has passed, finishes every
#    node, and nothing ran twice: each node installed and rebooted exactly once, n1 included;
#  - while the takeover runs (--lock-ttl 10s, longer than that), a third machine (runner-c) is
#    refused every time: a live holder renews its lock.
if [[ -z ${PLUMB_TEST_PG_HOST:-} ]]; then
  exec bash "${PLUMB_SRC:?}/tests/store/with_postgres.sh" bash "$0" "$@"
fi
. "$(dirname "$0")/lib/apply.sh"
ap_up 3 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 1
canary: 0
max_failures: 0
health: [ \"nvidia-smi -L\" ]
health_timeout: 1m"
STORE=$PLUMB_TEST_STORE
TTL_S=20
# runner-b: its own hostname, its own local journal (never written: the store is shared).
"$TB" exec unshare --uts sh -c 'hostname runner-b && exec "$@"' sh \
  env PLUMB_TEST_HOOKS=1 PLUMB_CRASH_AT=wait-boot.outcome:1 PLUMB_JOURNAL="$AP_TMP/runner-b.db" \
  "$PLUMB" apply --store "$STORE" --repo "$REPO" --ref HEAD --auto-approve --lock-ttl "${TTL_S}s" \
  --reboot-timeout 120 --poll-max-ms 500 >"$AP_TMP/b" 2>"$AP_TMP/b.err" && rcb=0 || rcb=$?
check "runner-b was killed -9 mid-run (exit $rcb)" test "$rcb" = 137
check "runner-b had rebooted n1 when it died" test "$(count_events n1 'reboot requested')" = 1
"$TB" exec "$PLUMB" runs --store "$STORE" --format json >"$AP_TMP/runs.json"
run=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["id"])' "$AP_TMP/runs.json")
check "the store shows runner-b's run ($run), not finished" \
  pyj "$AP_TMP/runs.json" 'len(j) == 1 and j[0]["outcome"] in ("", "running", None)'
here() { # ARGS...: plumb apply from this host; stdout/stderr -> $AP_TMP/a, a.err; $RC
  set +e
  "$TB" exec env PLUMB_JOURNAL="$AP_TMP/here.db" "$PLUMB" apply --store "$STORE" --repo "$REPO" "$@" \
    >"$AP_TMP/a" 2>"$AP_TMP/a.err"
  RC=$?
  set -e
}
asked_at=$(date -u +%s)
here --resume "$run" --lock-ttl "${TTL_S}s" --reboot-grace 8 --poll-max-ms 500
check "--resume while the lock lasts is refused (exit $RC)" test "$RC" != 0
check "... naming runner-b as the holder, with its pid" \
  grep -Eq "is locked by run $run \(host runner-b, pid [0-9]+\)" "$AP_TMP/a.err"
check "... with the hint: wait for expiry, or --force-unlock --dead-owner runner-b:PID" \
  grep -Eq "for the lock to expire.*--force-unlock $run --dead-owner runner-b:[0-9]+" "$AP_TMP/a.err"
until_ts=$(sed -n 's/.*, until \([^ ]*\)$/\1/p' "$AP_TMP/a.err" | head -1)
until_s=$(date -u -d "$until_ts" +%s 2>/dev/null || echo 0)
check "... and the lock's expiry ($until_ts) after we asked, within --lock-ttl of now" \
  test "$until_s" -ge "$asked_at" -a "$until_s" -le $(($(date -u +%s) + TTL_S + 1))
set +e
"$TB" exec "$PLUMB" apply --store "$STORE" --force-unlock "$run" >"$AP_TMP/a" 2>"$AP_TMP/a.err"
RC=$?
set -e
check "--force-unlock without --dead-owner is refused for another host's live lock (exit $RC)" \
  bash -c "test $RC != 0 && grep -q 'holds the lock from host runner-b' '$AP_TMP/a.err'"
check "n1 is still out of service, held by runner-b's run" \
  bash -c "[[ \$('$TB' exec sinfo -h -N -n n1 -o %E) == plumb:$run:* ]]"
# Retried as an operator or a CI job would: refused until the lock expires, then taken over.
# The takeover holds its lock with --lock-ttl 10s and lasts longer than that (installs on n2
# and n3 take 4 s each): runner-c, trying the same meanwhile, must be refused throughout (the
# holder renews its lock every ttl/5).
"$TB" state n2 apt_delay=4 >/dev/null
"$TB" state n3 apt_delay=4 >/dev/null
runner_c() { # one attempt from host runner-c; prints "refused" or "other:RC"
  local rc=0
  "$TB" exec unshare --uts sh -c 'hostname runner-c && exec "$@"' sh \
    env PLUMB_JOURNAL="$AP_TMP/runner-c.db" "$PLUMB" apply --store "$STORE" --repo "$REPO" \
    --resume "$run" --lock-ttl 10s --poll-max-ms 500 >"$AP_TMP/c" 2>"$AP_TMP/c.err" || rc=$?
  if [[ $rc != 0 ]] && grep -q "is locked by run $run (host $(hostname_here)" "$AP_TMP/c.err"; then
    echo refused
  elif [[ $rc == 0 ]] && grep -q "run $run is already done" "$AP_TMP/c"; then
    echo done   # the takeover released its lock as it ended: nothing left to let in to
  elif [[ $rc == 0 ]] && grep -q "^run $run done: 3 done" "$AP_TMP/c" && ! grep -qE '^  n[0-9]+ ' "$AP_TMP/c"; then
    echo done   # it read the run before the takeover ended and got the lock after: no step ran
  else
    echo "other:$rc"
    { echo "--- runner-c, exit $rc:"; cat "$AP_TMP/c" "$AP_TMP/c.err"; } >>"$AP_TMP/c-other.log"
  fi
}
hostname_here() { "$TB" exec hostname; }
refusals=0 took_at=0 RC=1 c_refused=0 c_other=0 c_last=0
for _ in $(seq 1 120); do
  set +e
  "$TB" exec env PLUMB_JOURNAL="$AP_TMP/here.db" "$PLUMB" apply --store "$STORE" --repo "$REPO" \
    --resume "$run" --lock-ttl 10s --reboot-grace 8 --poll-max-ms 500 >"$AP_TMP/a" 2>"$AP_TMP/a.err" &
  pid=$!
  set -e
  # Taken over once its run has started (stdout's "run R: ..."); refused if it ends first.
  while kill -0 "$pid" 2>/dev/null && ! grep -q "^run $run" "$AP_TMP/a"; do sleep 0.1; done
  if grep -q "^run $run" "$AP_TMP/a"; then
    took_at=$(date -u +%s)
    while kill -0 "$pid" 2>/dev/null; do
      case $(runner_c) in
        refused) c_refused=$((c_refused + 1)); c_last=$(($(date -u +%s) - took_at)) ;;
        done) ;;
        *) c_other=$((c_other + 1)) ;;
      esac
      sleep 1
    done
  fi
  set +e; wait "$pid"; RC=$?; set -e
  ((took_at == 0)) || break
  grep -q "is locked by run $run" "$AP_TMP/a.err" || break   # any other failure ends the test
  refusals=$((refusals + 1))
  sleep 2
done
check "the takeover finished the run (exit $RC) after $refusals more refusal(s)" test "$RC" = 0
check "... no sooner than the lock's expiry" test "$took_at" -ge "$until_s"
check "runner-c was refused while the takeover ran ($c_refused times, the last ${c_last} s in: past its 10 s lock TTL, renewed), never let in ($c_other)" \
  test "$c_refused" -ge 3 -a "$c_last" -gt 12 -a "$c_other" = 0
for n in n1 n2 n3; do
  check "$n: installed once and rebooted once (nothing ran twice)" \
    test "$(count_events $n 'apt-get install nvidia-driver-550')$(count_events $n 'reboot requested')" = 11
  check "$n converged" test "$(driver_of $n)" = 550.90.07
  check "$n back in service" test "$(state_of $n)" = idle
done
check "no VIOLATION" test "$(violations)" = 0
"$TB" exec "$PLUMB" runs --store "$STORE" --format json >"$AP_TMP/runs.json"
check "the store shows the run done" pyj "$AP_TMP/runs.json" 'len(j) == 1 and j[0]["outcome"] == "done"'
set +e
"$TB" exec "$PLUMB" history --store "$STORE" --verify >"$AP_TMP/verify" 2>&1
vrc=$?
set -e
check "the store's chain verifies (exit $vrc)" test "$vrc" = 0
if ((AP_FAIL > 0)); then
  echo "--- runner-b:"; tail -20 "$AP_TMP/b"; tail -5 "$AP_TMP/b.err"
  echo "--- here:"; tail -20 "$AP_TMP/a"; tail -10 "$AP_TMP/a.err"
  cat "$AP_TMP/c-other.log" 2>/dev/null
  cat "$AP_TMP/runs.json"
fi
ap_finish
