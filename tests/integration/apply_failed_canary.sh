#!/usr/bin/env bash
# A failed canary has a way forward, on real Slurm:
#  - the canary n1 fails (apt refuses its driver); the run halts; n1 stays drained with the
#    error's last line in its Slurm reason (not a command line cut at 200 characters);
#  - --resume halts again and does not send the operator round in a loop: it points to
#    --retry-failed;
#  - plan shows n1 "left drained by run X, failed at step S";
#  - the journal says so: `plumb runs RUN` halted, n1 failed at its install with apt's error, n2
#    and n3 not started; `plumb history n1` the failed install;
#  - once the cause is fixed (the fake apt's apt_fail knob cleared), `apply --retry-failed RUN`
#    converges n1, returns it to service and clears its reason, as a new run of n1 alone that the
#    journal shows done (install ok, n1 verified and resumed) while RUN's record stays as it was;
#    the journal verifies; a later apply rolls the rest.
. "$(dirname "$0")/lib/apply.sh"
ap_up 3 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 1
canary: 1
max_failures: 1
health: [ \"nvidia-smi -L\" ]
health_timeout: 1m"
"$TB" state n1 apt_fail=nvidia-driver >/dev/null
apply --ref HEAD --auto-approve --reboot-timeout 120 --poll-max-ms 1000
check "the canary failure halts the run (rc=$RC)" test "$RC" = 1
run=$(plumb_in runs --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
reason=$(reason_of n1)
check "n1 stays drained" bash -c "[[ \$($TB exec sinfo -h -N -n n1 -o %T) == drain* ]]"
check "n1's reason names the step and apt's error line ($reason)" \
  bash -c "[[ '$reason' == plumb:$run:failed:apply:nvidia_driver.install:* && '$reason' == *'E: Sub-process /usr/bin/dpkg returned an error code (1)'* ]]"
check "n1's reason holds no command line" bash -c "[[ '$reason' != *apt-get* ]]"
check "n2, n3 untouched" bash -c "! grep -q 'apt-get install' $TB_RUN/nodes/n2/state/events.log $TB_RUN/nodes/n3/state/events.log"
check "the output points to --retry-failed" grep -q "plumb apply --retry-failed $run" "$AP_TMP/out"
check "the output does not ask for --resume" bash -c "! grep -q 'continue with: plumb apply --resume' $AP_TMP/out"

# The journal, as `plumb runs` and `plumb history` show it.
runs_json() { plumb_in runs "$@" --format json; }
node_in() { # RUN NODE JQ-TEST: the node's entry in `plumb runs RUN` passes the test
  runs_json "$1" | jq -e --arg n "$2" ".nodes[] | select(.node == \$n) | $3" >/dev/null; }
check "runs: the run halted" test "$(runs_json "$run" | jq -r .state)" = halted
check "runs: n1 failed at its install, with apt's error" node_in "$run" n1 \
  '.status == "failed" and .last_step == "apply:nvidia_driver.install" and (.error | contains("E: Sub-process /usr/bin/dpkg returned an error code (1)"))'
for n in n2 n3; do check "runs: $n not started" node_in "$run" $n '.status == "not-started"'; done
check "history n1: the install failed in that run" bash -c '"$1" exec env PLUMB_JOURNAL="$2" "$3" history n1 --format json |
  jq -e --arg r "$4" "any(.[]; .run == \$r and .step == \"apply:nvidia_driver.install\" and .outcome == \"failed\")" >/dev/null' \
  _ "$TB" "$JOURNAL" "$PLUMB" "$run"

apply --resume "$run" --reboot-timeout 120 --poll-max-ms 1000
check "--resume halts again on the failed canary (rc=$RC)" test "$RC" = 1
check "  and does not loop back to --resume" bash -c "! grep -q 'continue with: plumb apply --resume' $AP_TMP/out"
check "  n2 still untouched" bash -c "! grep -q 'apt-get install' $TB_RUN/nodes/n2/state/events.log"

plumb_in plan --repo "$REPO" >"$AP_TMP/plan.txt" 2>&1 || true
check "plan shows n1 left drained by the run at its step" \
  grep -q "Left drained by run $run, failed at apply:nvidia_driver.install: n1" "$AP_TMP/plan.txt"

"$TB" state n1 -apt_fail >/dev/null
apply --retry-failed "$run" --auto-approve --reboot-timeout 120 --poll-max-ms 1000
check "--retry-failed succeeds (rc=$RC)" test "$RC" = 0
check "n1 converged" test "$(driver_of n1)" = 550.90.07
check "n1 back in service" test "$(state_of n1)" = idle
check "n1's failure reason is gone" bash -c "[[ \$($TB exec sinfo -h -N -n n1 -o %E) != plumb:* ]]"
check "the retry touched only n1" bash -c "! grep -q 'apt-get install' $TB_RUN/nodes/n2/state/events.log"
for n in n2 n3; do check "$n still in service" test "$(state_of $n)" = idle; done
retry=$(runs_json | jq -r '.[0].id')
check "runs: the retry is a new run ($retry)" bash -c '[[ -n $1 && $1 != null && $1 != "$2" ]]' _ "$retry" "$run"
check "runs: the retry is done" test "$(runs_json "$retry" | jq -r .state)" = "done"
check "runs: of n1 alone, done" test "$(runs_json "$retry" | jq -c '[.nodes[] | [.node, .status]]')" = '[["n1","done"]]'
check "runs: the failed run's record is as it was (halted, n1 failed)" bash -c \
  '[[ $("$1" exec env PLUMB_JOURNAL="$2" "$3" runs "$4" --format json | jq -r "[.state, (.nodes[] | select(.node == \"n1\") | .status)] | join(\" \")") == "halted failed" ]]' \
  _ "$TB" "$JOURNAL" "$PLUMB" "$run"
steps_of_retry=$(plumb_in history n1 --format json | jq -r --arg r "$retry" '[.[] | select(.run == $r) | "\(.step)=\(.outcome)"] | join(" ")')
check "history n1: the retry installed the driver ($steps_of_retry)" bash -c '[[ " $1 " == *" apply:nvidia_driver.install=ok "* ]]' _ "$steps_of_retry"
check "history n1: ... then verified and returned n1 to service" bash -c '[[ " $1 " == *" verify=ok "* && " $1 " == *" resume=ok "* ]]' _ "$steps_of_retry"
check "the journal verifies" plumb_in history --verify
apply --ref HEAD --auto-approve --reboot-timeout 120 --poll-max-ms 1000
check "a fresh apply rolls the rest (rc=$RC)" test "$RC" = 0
for n in n2 n3; do check "$n converged" test "$(driver_of $n)" = 550.90.07; done
check "no VIOLATION" test "$(violations)" = 0
ap_finish
