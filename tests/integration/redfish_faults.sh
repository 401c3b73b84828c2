#!/bin/bash
# Redfish client under the emulator's faults: 503 + Retry-After, slow responses past the
# timeout, dropped connections, a BMC that reboots (listener down), transient 412 on PATCH,
# session limit reached, a failing update task. Sessions are logged out on every path.
source "$PLUMB_SRC/tests/integration/lib/redfish.sh"
rf_up --count 3 --vendor mixed   # n1 dmtf, n2 ilo, n3 openbmc

rf_fault n1 unavailable=2 retry_after=1
pb inventory --node n1
rf_sync
check "503 + Retry-After twice, then success (rc=$rc)" [ "$rc" = 0 ]
check "the two 503s were seen by the BMC" bash -c "[ \$(grep -c ' n1 .* 503 ' '$RF_RUN/requests.log') -ge 2 ]"

rf_fault n2 delay=2.5 delay_count=1
start=$(date +%s.%N)
pb inventory --node n2 --timeout 1
check "a response slower than --timeout is retried (rc=$rc)" [ "$rc" = 0 ]
check "the retry note names the timeout" has "http.timeout" "$ERR"

rf_fault n3 drop=1
pb inventory --node n3
check "a dropped connection is retried (rc=$rc)" [ "$rc" = 0 ]

rf_fault n1 down=2
sleep 0.2
pb inventory --node n1
check "a BMC rebooting (refusing connections for 2 s) is waited for (rc=$rc)" [ "$rc" = 0 ]

echo '{"bios": {"SriovGlobalEnable": "Enabled"}}' >"$RF_WORK/bios.json"
rf_fault n1 precondition=1
: >"$RF_RUN/requests.log"
pb apply --node n1 --desired "$RF_WORK/bios.json"
rf_sync
check "transient 412 on the BIOS PATCH: re-read and retried once (rc=$rc)" [ "$rc" = 0 ]
check "  the BMC saw 412 then a successful PATCH with If-Match" bash -c "grep ' n1 PATCH ' '$RF_RUN/requests.log' | awk '{print \$5, \$7}' | tr '\n' ' ' | grep -Eq '^412 if-match=1 20[04] if-match=1 \$'"

rf_fault n1 session_limit=0
pb inventory --node n1
check "session limit reached: inventory reports the node unreadable (rc=$rc)" [ "$rc" = 3 ]
check "  the error carries the BMC's ExtendedInfo message id" has "SessionLimitExceeded" "$OUT"
"$RF_BMC" ctl --run "$RF_RUN" DELETE /bmcs/n1/faults >/dev/null

rf_fault n2 session_limit=0
pb inventory --node n2
check "iLO session limit (400 CreateLimitReached) is reported (rc=$rc)" [ "$rc" = 3 ]
check "  with its message id" has "CreateLimitReachedForResource" "$OUT"
"$RF_BMC" ctl --run "$RF_RUN" DELETE /bmcs/n2/faults >/dev/null

echo '{"firmware": {"BMC": "1.99.0"}, "firmware_images": {"BMC": "https://fw.example/BMC-1.99.0.bin"}}' >"$RF_WORK/fw.json"
rf_fault n1 task_fail=1
pb apply --node n1 --desired "$RF_WORK/fw.json"
check "a failed update task is an error (rc=$rc)" [ "$rc" = 1 ]
check "  naming the task's end state" has "ended Exception" "$ERR"

check "no session left behind on any error path (live: $(rf_sessions))" [ "$(rf_sessions)" = 0 ]

# Sessions that expire while plumb waits on a task (idle timeout 1 s < the 2 s poll):
# 401 -> log in again once -> carry on; the old session is gone, the new one logged out.
rf_down
rf_up --count 1 --vendor dmtf --option session_timeout=1
echo '{"firmware": {"BMC": "1.50.0"}, "firmware_images": {"BMC": "https://fw.example/BMC-1.50.0.bin"}}' >"$RF_WORK/fw2.json"
pb apply --node n1 --desired "$RF_WORK/fw2.json"
rf_sync
check "session expired during a task: re-login and finish (rc=$rc)" [ "$rc" = 0 ]
check "  the BMC answered 401 and saw a second login" bash -c "grep -q ' n1 GET .* 401 ' '$RF_RUN/requests.log' && [ \$(grep -c ' n1 POST /redfish/v1/SessionService/Sessions ' '$RF_RUN/requests.log') = 2 ]"
check "  and the new session was logged out (live: $(rf_sessions))" [ "$(rf_sessions)" = 0 ]
rf_finish
