#!/usr/bin/env bash
# Faults during plumb apply on real Slurm: an apt failure (n1), a reboot that never returns (n2),
# a failing health gate (n3), a drain that times out behind a long job (n4). Each node is left
# drained with "plumb:<run>:failed:<step>: <error>", the failure budget halts the rollout before
# n5 starts, and the output says why.
. "$(dirname "$0")/lib/apply.sh"
ap_up 5 "drain: { scheduler: slurm, timeout: 5s }
max_unavailable: 4
canary: 0
max_failures: 1
health: [ \"/usr/local/bin/plumb-test-health\" ]
health_timeout: 30s"
"$TB" state n1 apt_fail=nvidia-driver >/dev/null
"$TB" state n2 reboot_hang=1 >/dev/null
for i in 1 2 3 4 5; do   # the gate: healthy unless /etc/plumb-test-unhealthy exists
  "$TB" ssh "n$i" "printf '#!/bin/sh\\ntest ! -e /etc/plumb-test-unhealthy\\n' >/usr/local/bin/plumb-test-health && chmod +x /usr/local/bin/plumb-test-health"
done
"$TB" ssh n3 touch /etc/plumb-test-unhealthy
job_on n4 600 >/dev/null
apply --ref HEAD --auto-approve --reboot-timeout 15 --poll-max-ms 1000 --plan-out "$AP_TMP/plan.json"
check "apply exits 1 (rc=$RC)" test "$RC" = 1
check "the output says the budget halted it" grep -q "more than max_failures (1)" "$AP_TMP/out"
run=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[0]['id'])" <(plumb_in runs --format json))
expect_reason() { # NODE PREFIX
  local r; r=$(reason_of "$1")
  [[ $r == "plumb:$run:failed:$2"* ]] || { echo "  $1 reason: $r"; return 1; }
}
check "n1 (apt failure) drained, reason names the install" expect_reason n1 "apply:nvidia_driver.install"
check "n2 (reboot never returns) drained, reason names wait-boot" expect_reason n2 "wait-boot: no new boot id"
check "n3 (health gate) drained, reason names the gate" expect_reason n3 "health:1: health gate"
check "n4 (drain timeout) drained, reason names the drain timeout" expect_reason n4 "wait-drained: drain timeout"
for n in n1 n2 n3 n4; do check "$n is still drained in Slurm" bash -c "[[ \$($TB exec sinfo -h -N -n $n -o %T) == drain* || \$($TB exec sinfo -h -N -n $n -o %T) == down* ]]"; done
check "n4: nothing installed while its job ran" test "$(count_events n4 'apt-get install')" = 0
check "n5 never started (untouched, in service)" bash -c "test \$($TB exec sinfo -h -N -n n5 -o %T) = idle && ! grep -q 'apt-get install' $TB_RUN/nodes/n5/state/events.log"
check "no VIOLATION anywhere" test "$(violations)" = 0
plumb_in runs "$run" >"$AP_TMP/run.txt"
check "plumb runs RUN shows each failure and n5 not started" \
  bash -c "grep -q 'n5 *not-started' $AP_TMP/run.txt && grep -c ' failed ' $AP_TMP/run.txt | grep -qx 4"
# The journal is lost; --resume with the plan file finds the run's nodes by their Slurm reasons.
# The ones that failed stay failed (drained, reasons kept, not retried, counted against
# max_failures); nothing else starts.
installs_before=$(cat "$TB_RUN"/nodes/*/state/events.log | grep -c 'apt-get install' || true)
rm -f "$JOURNAL" "$JOURNAL-wal" "$JOURNAL-shm"
apply --resume "$run" "$AP_TMP/plan.json" --reboot-timeout 15 --poll-max-ms 1000
check "journal lost: --resume says the failed nodes are left as they are" \
  grep -q "4 more failed before: left as they are" "$AP_TMP/err"
check "journal lost: no failed node retried (no new install anywhere)" \
  test "$(cat "$TB_RUN"/nodes/*/state/events.log | grep -c 'apt-get install' || true)" = "$installs_before"
check "journal lost: n1 keeps its failure reason" expect_reason n1 "apply:nvidia_driver.install"
check "journal lost: n5 still untouched" bash -c "! grep -q 'apt-get install' $TB_RUN/nodes/n5/state/events.log"
check "journal lost: the resumed run halts on the failure budget (rc=$RC)" test "$RC" = 1
ap_finish
