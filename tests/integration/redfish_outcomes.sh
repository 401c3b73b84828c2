#!/bin/bash
# Firmware outcomes and waits against the emulator's task faults (issue 32): a task Completed
# with TaskStatus Critical + ApplyFailed fails; a last monitor answer cut short is unknown and the
# version decides; one 500 on the first poll is polled again and the update completes; a BMC
# without a TaskService that applies a moment later is read back before "staged"; a task that
# never ends times out with progress lines and says what it waited for; SIGINT and SIGTERM end a
# task wait (even one whose poll hangs), delete the session, say what was in flight, exit 130.
# Nothing here races the clock: a task that must still be running is held (update_hold).
source "$PLUMB_SRC/tests/integration/lib/redfish.sh"
rf_up --count 3 --vendor dmtf --option-of n3:task_mode=no-task
W=$RF_WORK
fw() { # fw FILE VERSION: a desired state flashing the BMC to VERSION through SimpleUpdate
  echo "{\"firmware\": {\"BMC\": \"$2\"}, \"firmware_images\": {\"BMC\": \"https://fw.example/BMC-$2.bin\"}}" >"$W/$1"
}
requests() { grep -c " $1 $2 " "$RF_RUN/requests.log" || true; }

# 1. Completed + TaskStatus Critical + Update.1.0.ApplyFailed: failed, not "staged".
fw critical.json 1.60.0
rf_fault n1 task_critical=1
pb apply --node n1 --desired "$W/critical.json"
check "Completed + Critical + ApplyFailed fails the update (rc=$rc)" [ "$rc" = 1 ]
check "  naming TaskStatus Critical and ApplyFailed" bash -c "grep -q 'TaskStatus Critical' '$ERR' && grep -q 'ApplyFailed' '$ERR'"
check "  never 'staged'" bash -c "! grep -q 'staged' '$OUT'"
pb plan --node n1 --desired "$W/critical.json"
check "  and the version did not change (plan still differs, rc=$rc)" [ "$rc" = 2 ]

# 2. The last monitor answer (and the Task's) cut short.
fw cut-failed.json 1.61.0
rf_fault n1 task_truncate=1 task_fail=1
pb apply --node n1 --desired "$W/cut-failed.json"
check "a cut-short end of a task that failed: unknown, the version decides: failed (rc=$rc)" [ "$rc" = 1 ]
check "  saying the end is unknown and why" bash -c "grep -q 'unknown' '$ERR' && grep -q 'not JSON' '$ERR'"
check "  and that the version did not change" has "still shows" "$ERR"
fw cut-ok.json 1.62.0
rf_fault n1 task_truncate=1
pb apply --node n1 --desired "$W/cut-ok.json"
check "a cut-short end of a task that worked: the version decides: updated (rc=$rc)" [ "$rc" = 0 ]
check "  said to be by the inventory" has "updated via SimpleUpdate to 1.62.0 (by the inventory" "$OUT"

# 3. One HTTP 500 from the monitor's first poll: polled again, the update completes.
fw five.json 1.63.0
rf_fault n1 monitor_error=1
pb apply --node n1 --desired "$W/five.json"
check "a 500 on the first monitor poll does not fail the update (rc=$rc)" [ "$rc" = 0 ]
check "  updated" has "updated via SimpleUpdate to 1.63.0" "$OUT"
check "  the note names the HTTP status" has "HTTP 500" "$ERR"

# 4. No TaskService, applies a moment after its 200: read back before saying staged. The update
#    is held until plumb has read the version back once after its POST, then let go.
fw notask.json 1.64.0
rf_fault n3 update_hold=1
: >"$RF_RUN/requests.log"
n=$((n + 1)); OUT=$RF_OUT/$n.out ERR=$RF_OUT/$n.err
"$PLUMB_BMC_MODULE_APPLY" apply --targets "$RF_RUN/bmcs.txt" --ca "$RF_RUN/certs/ca.pem" \
  --credentials "file:$RF_RUN/credentials" --node n3 --desired "$W/notask.json" >"$OUT" 2>"$ERR" &
pid=$!
read_back=no
for _ in $(seq 1 300); do
  if awk '$3 == "POST" && $4 ~ /SimpleUpdate/ {p = 1} p && $3 == "GET" && $4 ~ /FirmwareInventory\/BMC$/ {f = 1} END {exit !f}' \
    "$RF_RUN/requests.log" 2>/dev/null; then read_back=yes; break; fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
rf_fault n3 update_hold=0
set +e; wait "$pid"; rc=$?; set -e
check "no TaskService: plumb read the version back after its 200 ($read_back)" [ "$read_back" = yes ]
check "  applied a moment later: updated, not staged (rc=$rc)" bash -c "[ $rc = 0 ] && grep -q 'updated via SimpleUpdate to 1.64.0' '$OUT' && ! grep -q staged '$OUT'"

# 5. A task that never ends: --task-timeout, progress lines on a log, what it waited for.
fw hang.json 1.65.0
rf_fault n1 update_hold=1
n=$((n + 1)); OUT=$RF_OUT/$n.out ERR=$RF_OUT/$n.err
set +e
PLUMB_HEARTBEAT_S=1 "$PLUMB_BMC_MODULE_APPLY" apply --targets "$RF_RUN/bmcs.txt" --ca "$RF_RUN/certs/ca.pem" \
  --credentials "file:$RF_RUN/credentials" --node n1 --desired "$W/hang.json" --task-timeout 4s \
  >"$OUT" 2>"$ERR"
rc=$?
set -e
check "a task that never ends fails at --task-timeout (rc=$rc)" [ "$rc" = 1 ]
check "  naming the task, the timeout and its last state" bash -c "grep -q 'gave up waiting for task /redfish/v1/TaskService/Tasks/' '$ERR' && grep -q 'after 4s' '$ERR' && grep -q 'last: Running' '$ERR'"
check "  progress lines on stderr (not a TTY), with the task's percent" \
  grep -Eq '^plumb: n1: waiting for task /redfish/v1/TaskService/Tasks/[0-9]+: Running [0-9]+% \(' "$ERR"
rf_fault n1 update_hold=0

# 6. SIGINT / SIGTERM while a task runs (held: it never ends by itself): the wait ends, the
#    session is deleted, what was in flight is said, exit 130.
for sig in INT TERM; do
  fw "sig-$sig.json" "1.7$([ $sig = INT ] && echo 0 || echo 1).0"
  rf_fault n2 update_hold=1
  : >"$RF_RUN/requests.log"
  n=$((n + 1)); OUT=$RF_OUT/$n.out ERR=$RF_OUT/$n.err
  "$PLUMB_BMC_MODULE_APPLY" apply --targets "$RF_RUN/bmcs.txt" --ca "$RF_RUN/certs/ca.pem" \
    --credentials "file:$RF_RUN/credentials" --node n2 --desired "$W/sig-$sig.json" >"$OUT" 2>"$ERR" &
  pid=$!
  for _ in $(seq 1 300); do
    grep -q ' n2 GET /redfish/v1/TaskService/TaskMonitors/' "$RF_RUN/requests.log" 2>/dev/null && break
    sleep 0.1
  done
  check "SIG$sig: plumb was polling the task monitor" grep -q ' n2 GET /redfish/v1/TaskService/TaskMonitors/' "$RF_RUN/requests.log"
  kill -"$sig" "$pid"
  # The task is held: the signal is the only way out (a bound, not a race).
  set +e; timeout 60 tail --pid="$pid" -f /dev/null; gone=$?; wait "$pid"; rc=$?; set -e
  check "  plumb ended on SIG$sig (not at the 45m task timeout)" [ "$gone" = 0 ]
  check "  exit 130 (rc=$rc)" [ "$rc" = 130 ]
  check "  says what was in flight" bash -c "grep -q 'interrupted' '$ERR' && grep -q 'was in flight (task /redfish/v1/TaskService/Tasks/' '$ERR'"
  rf_sync
  check "  its session was deleted (live: $(rf_sessions))" [ "$(rf_sessions)" = 0 ]
  check "  the BMC saw the DELETE of the session" grep -Eq ' n2 DELETE /redfish/v1/SessionService/Sessions/' "$RF_RUN/requests.log"
  rf_fault n2 update_hold=0
done

# 7. SIGINT while a poll of the monitor hangs (the BMC takes 60 s to answer it): the request
#    is abandoned, not waited out. The emulator counts a delayed request when it arrives, so
#    delay_count back at 0 says the poll is in flight.
fw hung.json 1.72.0
rf_fault n2 update_hold=1
: >"$RF_RUN/requests.log"
n=$((n + 1)); OUT=$RF_OUT/$n.out ERR=$RF_OUT/$n.err
"$PLUMB_BMC_MODULE_APPLY" apply --targets "$RF_RUN/bmcs.txt" --ca "$RF_RUN/certs/ca.pem" \
  --credentials "file:$RF_RUN/credentials" --node n2 --desired "$W/hung.json" --timeout 120 >"$OUT" 2>"$ERR" &
pid=$!
for _ in $(seq 1 300); do
  grep -q ' n2 GET /redfish/v1/TaskService/TaskMonitors/' "$RF_RUN/requests.log" 2>/dev/null && break
  sleep 0.1
done
rf_fault n2 delay=60 delay_count=1
in_flight=no
for _ in $(seq 1 300); do
  if rf_state n2 | python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["faults"]["delay_count"] != 0)'; then
    in_flight=yes; break
  fi
  sleep 0.1
done
check "a monitor poll is in flight, its answer 60 s away ($in_flight)" [ "$in_flight" = yes ]
kill -INT "$pid"
set +e; timeout 30 tail --pid="$pid" -f /dev/null; gone=$?; wait "$pid"; rc=$?; set -e
check "  SIGINT abandons the hanging poll: plumb ends long before its answer" [ "$gone" = 0 ]
check "  exit 130 (rc=$rc)" [ "$rc" = 130 ]
rf_sync
check "  its session was deleted (live: $(rf_sessions))" [ "$(rf_sessions)" = 0 ]
rf_fault n2 update_hold=0

check "no session left behind (live: $(rf_sessions))" [ "$(rf_sessions)" = 0 ]
rf_finish
