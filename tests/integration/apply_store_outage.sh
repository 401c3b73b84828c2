#!/usr/bin/env bash
# The shared PostgreSQL store goes away in the middle of an apply (issue 35), on real Slurm:
#  - the store's password is in PLUMB_STORE, never on the command line: no process's argv
#    (ps, /proc/PID/cmdline) shows it while the apply runs, and --store with a password is
#    refused before anything is read;
#  - the server is stopped (as by a crash) while n3 installs (held there by apt_hold), and
#    stays down: the apply says at once that the store does not answer and what it waits for,
#    touches no other node, and exits within its retry window + 30 s + a wide margin (not one
#    window per node and per write: minutes); its last words name the outage, not a full disk;
#  - once the server is back, `plumb runs RUN` says what is known (n3 stopped mid-step without
#    a record of how it ended; the nodes not started have no record), the operator is recorded
#    as the uid's name and the login ($SUDO_USER), and --resume converges with nothing twice;
#  - during that resume, an outage shorter than the window (PLUMB_STORE_RETRY_S=600) is said
#    at once, while the apply waits, and ridden out.
# Runs beside a PostgreSQL server of its own (tests/store/with_postgres.sh).
if [[ -z ${PLUMB_TEST_PG_HOST:-} ]]; then
  exec bash "${PLUMB_SRC:?}/tests/store/with_postgres.sh" bash "$0" "$@"
fi
. "$(dirname "$0")/lib/apply.sh"
N=6
ap_up "$N" "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 1
canary: 0
max_failures: 0
health: [ \"nvidia-smi -L\" ]
health_timeout: 1m"
PW=$PLUMB_TEST_PG_PW
STORE="postgresql:///$PLUMB_TEST_PG_PW_USER?host=$PLUMB_TEST_PG_HOST&port=$PLUMB_TEST_PG_PORT&user=$PLUMB_TEST_PG_PW_USER&password=$PW"
W=15          # PLUMB_STORE_RETRY_S of the first apply
SLACK=90      # on top of the bound the apply states (window + the step under way + 30 s)
pg_ctl() { $PLUMB_TEST_PG_AS "$PLUMB_TEST_PG_CTL" -D "$PLUMB_TEST_PG_DATA" "$@"; }
pg_stop() { pg_ctl -m immediate -w -t 60 stop >/dev/null; }
pg_start() { pg_ctl -w -t 120 -l "$PLUMB_TEST_PG_HOST/server.log" -o "$PLUMB_TEST_PG_OPTS" start >/dev/null; }
installed() { count_events "$1" 'apt-get install nvidia-driver-550='; }
held() { grep -qs "apt-get held .* (apt_hold)" "$TB_RUN/nodes/$1/state/events.log"; }
# No process's command line holds the password (python reads /proc itself: a grep for the
# password would find its own argv), and a plumb apply is among them (so the check looks at it).
argv_clean() {
  PW=$PW python3 -c '
import glob, os, sys
pw = os.environ["PW"].encode()
seen = leaked = 0
for f in glob.glob("/proc/[0-9]*/cmdline"):
    try:
        a = open(f, "rb").read()
    except OSError:
        continue
    seen += b"plumb\0apply" in a
    leaked += pw in a
sys.exit(0 if seen and not leaked else 1)'
}
# The pids of this test's plumb apply processes (their argv names this test's repo).
plumb_pids() {
  python3 - "$REPO" <<'PY'
import glob, sys
for f in glob.glob("/proc/[0-9]*/cmdline"):
    try:
        a = open(f, "rb").read().split(b"\0")
    except OSError:
        continue
    if len(a) > 2 and a[0].endswith(b"plumb") and a[1] == b"apply" and sys.argv[1].encode() in a:
        print(f.split("/")[2])
PY
}
ps_clean() { ps -eo args | python3 -c 'import os,sys; t=sys.stdin.read(); sys.exit(0 if "plumb apply" in t and os.environ["PW"] not in t else 1)'; }
export PW
apply_bg() { # OUT RETRY_S ARGS...: plumb apply in the background, the store's password in PLUMB_STORE
  local out=$1 retry=$2
  shift 2
  # (PLUMB_STORE in the environment all the way: `env PLUMB_STORE=...` would put it in argv)
  PLUMB_STORE=$STORE "$TB" exec env PLUMB_JOURNAL="$AP_TMP/local.db" PLUMB_STORE_RETRY_S="$retry" \
    SUDO_USER=alice PLUMB_HEARTBEAT_S=2 "$PLUMB" apply --repo "$REPO" --lock-ttl 10m --reboot-timeout 120 \
    --poll-max-ms 1000 "$@" >"$out" 2>"$out.err" &
  BG=$!
}
wait_for() { # SECONDS CMD...: until CMD succeeds or the apply ($BG) ended; 1 when neither came
  local limit=$1
  shift
  for _ in $(seq 1 $((limit * 5))); do
    "$@" && return 0
    kill -0 "$BG" 2>/dev/null || { "$@"; return; }
    sleep 0.2
  done
  return 1
}

# A password on the command line: refused, before the store or a node is touched.
set +e
"$TB" exec "$PLUMB" apply --store "$STORE" --repo "$REPO" --ref HEAD --auto-approve >"$AP_TMP/argv" 2>&1
rc=$?
set -e
check "--store with a password is refused (exit $rc), pointing to PLUMB_STORE and .pgpass" \
  bash -c "test $rc = 1 && grep -q 'a password on the command line' '$AP_TMP/argv' && grep -q PLUMB_STORE '$AP_TMP/argv' && grep -q pgpass '$AP_TMP/argv'"
check "... without printing it" bash -c "! grep -qF -- \"\$PW\" '$AP_TMP/argv'"
check "... and nothing was touched" test "$(cat "$TB_RUN"/nodes/*/state/events.log | grep -c 'apt-get install' || true)" = 0

# 1. The store goes away during n3's install and stays away.
"$TB" state n3 apt_hold=1 >/dev/null
apply_bg "$AP_TMP/o1" "$W" --ref HEAD --auto-approve
check "n3 is held in its install" wait_for 600 held n3
check "no process's argv (/proc/PID/cmdline) holds the store's password while the apply runs" argv_clean
check "... nor what ps shows" ps_clean
declare -A before
for i in $(seq 1 "$N"); do before[n$i]=$(wc -l <"$TB_RUN/nodes/n$i/state/events.log"); done
pg_stop
"$TB" state n3 -apt_hold >/dev/null   # the install ends; its outcome meets the outage
t0=$(date +%s)
bound=$((W + 30 + SLACK))
while kill -0 "$BG" 2>/dev/null && (($(date +%s) - t0 <= bound)); do sleep 0.2; done
took=$(($(date +%s) - t0))
if kill -0 "$BG" 2>/dev/null; then   # past the bound: end it (the check below fails)
  for p in $(plumb_pids); do kill -9 "$p" 2>/dev/null || true; done
fi
set +e; wait "$BG"; rc1=$?; set -e
check "the apply exited within ${bound}s of the outage (${W}s window + 30s + ${SLACK}s margin): ${took}s" \
  test "$took" -le "$bound"
check "... as an error (exit $rc1): the journal could not be written" test "$rc1" = 1
first=$(grep -m1 -i "store\|journal\|cluster lock" "$AP_TMP/o1.err" || true)
check "its first word on the store says at once that it does not answer, and what it waits for" \
  bash -c "grep -q 'does not answer' <<<\"\$1\" && grep -q 'waiting up to ${W}s (PLUMB_STORE_RETRY_S)' <<<\"\$1\"" _ "$first"
check "... and what the run does if it stays down (the bound, --resume)" \
  bash -c "grep -q 'stops within about ${W}s plus the step under way plus 30s' <<<\"\$1\" && grep -q 'plumb apply --resume' <<<\"\$1\"" _ "$first"
check "no retry loop per write: 'retrying to record the run's end' said at most once" \
  test "$(grep -c "retrying to record the run's end" "$AP_TMP/o1" "$AP_TMP/o1.err" | awk -F: '{s += $2} END {print s}')" -le 1
check "the summary says the store stopped answering, not 'free space'" \
  bash -c "grep -q 'stopped answering' '$AP_TMP/o1' && ! grep -q 'free space' '$AP_TMP/o1' '$AP_TMP/o1.err'"
check "the password is in no output" bash -c "! grep -qF -- \"\$PW\" '$AP_TMP/o1' '$AP_TMP/o1.err'"
untouched=()
for i in $(seq 1 "$N"); do
  n=n$i
  [[ $n == n3 ]] && continue
  after=$(wc -l <"$TB_RUN/nodes/$n/state/events.log")
  [[ $after == "${before[$n]}" ]] || untouched+=("$n:${before[$n]}->$after")
done
check "no other node was touched after the store went away (${untouched[*]:-none})" test "${#untouched[@]}" = 0
not_started=()
for i in $(seq 1 "$N"); do [[ $(installed "n$i") == 0 && n$i != n3 ]] && not_started+=("n$i"); done
check "some nodes were left not started (${not_started[*]:-none})" test "${#not_started[@]}" -ge 1

# 2. Back: what is known, and who ran it.
pg_start
set +e
PLUMB_STORE=$STORE "$TB" exec "$PLUMB" runs --format json >"$AP_TMP/runs.json" 2>"$AP_TMP/runs.err"
set -e
run=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["id"])' "$AP_TMP/runs.json")
PLUMB_STORE=$STORE "$TB" exec "$PLUMB" runs "$run" --format json >"$AP_TMP/run.json"
PLUMB_STORE=$STORE "$TB" exec "$PLUMB" runs "$run" >"$AP_TMP/run.txt"
check "plumb runs: the run is not taken for a live one (its process is gone)" \
  pyj "$AP_TMP/run.json" 'j["outcome"] == "running" and j["state"].startswith("running (owner gone")'
check "plumb runs: n3 stopped during its install, whose end is not recorded" \
  pyj "$AP_TMP/run.json" '[n for n in j["nodes"] if n["node"] == "n3" and n["status"] == "running" and "stopped during apply:nvidia_driver.install (its intent is recorded, not how it ended)" in n["known"]]'
check "plumb runs: the nodes not started have no record, and say so (${not_started[*]})" \
  python3 - "$AP_TMP/run.json" "$AP_TMP/run.txt" "${not_started[@]}" <<'PY'
import json, sys
j, text, want = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), set(sys.argv[3:])
rows = {n["node"] for n in j["nodes"]}
sys.exit(0 if want <= set(j["nodes_without_record"]) and not (want & rows) and "no record: not started" in text else 1)
PY
check "plumb runs: the operator is the uid's name, and the login (SUDO_USER) beside it" \
  pyj "$AP_TMP/run.json" 'j["who"]["operator"] == "root" and j["who"]["login_user"] == "alice"'
check "... in the text too" grep -q "operator root (login alice)" "$AP_TMP/run.txt"

# 3. --resume: an outage shorter than its window is said at once, and ridden out.
last=${not_started[-1]}
"$TB" state "$last" apt_hold=1 >/dev/null
apply_bg "$AP_TMP/o2" 600 --resume "$run"
check "$last is held in its install (the resumed run)" wait_for 600 held "$last"
pg_stop
"$TB" state "$last" -apt_hold >/dev/null
said() { grep -q "does not answer.*waiting up to 600s" "$AP_TMP/o2.err"; }
# 120 s: far below the 600 s window, after which alone the old code said anything.
check "the outage is said at once (within 120s), while the apply waits for the store" wait_for 120 said
check "... and the apply is still waiting, not stopped" kill -0 "$BG"
pg_start
set +e; wait "$BG"; rc2=$?; set -e
check "the resumed apply rode the outage out and finished (exit $rc2)" test "$rc2" = 0
check "... saying the store answers again" grep -q "answers again" "$AP_TMP/o2.err"
for i in $(seq 1 "$N"); do
  n=n$i
  check "$n: installed once and rebooted once" \
    test "$(installed $n)$(count_events $n 'reboot requested')" = 11
  check "$n converged" test "$(driver_of $n)" = 550.90.07
  check "$n back in service" test "$(state_of $n)" = idle
done
check "no VIOLATION" test "$(violations)" = 0
if ((AP_FAIL > 0)); then
  for o in o1 o2; do echo "--- $o:"; tail -20 "$AP_TMP/$o" 2>/dev/null; echo "--- $o stderr:"; tail -20 "$AP_TMP/$o.err" 2>/dev/null; done
  cat "$AP_TMP/run.txt" 2>/dev/null || true
fi
ap_finish
