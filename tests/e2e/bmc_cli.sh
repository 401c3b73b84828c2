#!/bin/bash
# plumb bmc without any BMC: bad input gets a clear error (exit 1) and nothing is contacted;
# an unreachable BMC is a partial result (exit 3) whose error names the cause.
set -uo pipefail
: "${PLUMB:?}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fails=0
check() { local what=$1; shift; if "$@"; then echo "ok   - $what"; else echo "FAIL - $what"; fails=$((fails + 1)); fi; }
echo "n1 https://127.0.0.1:9" >"$work/targets"   # discard port: nothing listens

"$PLUMB" bmc inventory --targets "$work/targets" >"$work/o" 2>"$work/e"; rc=$?
check "no credentials reference: exit 1 (rc=$rc)" [ $rc = 1 ]
check "  saying how to set one" grep -q "credentials" "$work/e"

unset PLUMB_E2E_NOPE
"$PLUMB" bmc inventory --targets "$work/targets" --credentials env:PLUMB_E2E_NOPE >"$work/o" 2>"$work/e"; rc=$?
check "unset env credentials: exit 1 (rc=$rc)" [ $rc = 1 ]
check "  naming the variable" grep -q "PLUMB_E2E_NOPE is not set" "$work/e"

export PLUMB_E2E_CRED="admin:e2e-PLANTED-secret"
"$PLUMB" bmc inventory --targets "$work/targets" --credentials env:PLUMB_E2E_CRED --fingerprint sha256:zz >"$work/o" 2>"$work/e"; rc=$?
check "malformed fingerprint: exit 1 (rc=$rc)" [ $rc = 1 ]

"$PLUMB" bmc inventory --targets "$work/targets" --credentials env:PLUMB_E2E_CRED --node nope >"$work/o" 2>"$work/e"; rc=$?
check "unknown node: exit 1 (rc=$rc)" [ $rc = 1 ]

"$PLUMB" bmc inventory --targets "$work/targets" --credentials env:PLUMB_E2E_CRED --timeout 2 -v >"$work/o" 2>"$work/e"; rc=$?
check "unreachable BMC: partial, exit 3 (rc=$rc)" [ $rc = 3 ]
check "  with the transport error code" grep -q "http.connect" "$work/o"

"$PLUMB" bmc inventory --targets "$work/targets" --credentials env:PLUMB_E2E_CRED --task-timeout soon >"$work/o" 2>"$work/e"; rc=$?
check "a --task-timeout that is no duration: exit 1 (rc=$rc)" [ $rc = 1 ]
check "  saying so, with the forms it takes" bash -c "grep -q 'task-timeout soon: not a duration' '$work/e' && grep -q '45m' '$work/e'"

"$PLUMB" bmc reset n1 --targets "$work/targets" --credentials env:PLUMB_E2E_CRED --type sideways >"$work/o" 2>"$work/e"; rc=$?
check "unknown reset type: exit 1 (rc=$rc)" [ $rc = 1 ]
# One door (issue 31): bmc apply is plumb apply of the Redfish modules, from the repo's commit;
# bmc reset reads the node's scheduler from the repo first. Neither takes a targets file.
"$PLUMB" bmc reset n1 --targets "$work/targets" --credentials env:PLUMB_E2E_CRED >"$work/o" 2>"$work/e"; rc=$?
check "bmc reset --targets: refused, exit 1 (rc=$rc)" [ $rc = 1 ]
check "  because the node's scheduler is read from the repo" grep -q "scheduler is read from the cluster repo" "$work/e"
"$PLUMB" bmc apply --targets "$work/targets" >"$work/o" 2>"$work/e"; rc=$?
check "bmc apply --targets: refused, exit 1 (rc=$rc)" [ $rc = 1 ]
check "  saying changes go through the engine" grep -q "only through the engine" "$work/e"
echo '{"bios": {"X": "1"}}' >"$work/d.json"
"$PLUMB" bmc apply --desired "$work/d.json" >"$work/o" 2>"$work/e"; rc=$?
check "bmc apply --desired: refused, exit 1 (rc=$rc)" [ $rc = 1 ]
for empty in "" "," "!" " "; do
  "$PLUMB" bmc apply --repo "$work" --limit "$empty" >"$work/o" 2>"$work/e"; rc=$?
  check "bmc apply --limit '$empty': refused, exit 1 (rc=$rc)" [ $rc = 1 ]
  check "  naming no node" grep -q "names no node" "$work/e"
done
# bmc apply takes plumb apply's flags, and its rules: --reboot-grace is for --resume only.
"$PLUMB" bmc apply --repo "$work" --limit n1 --reboot-grace 30 >"$work/o" 2>"$work/e"; rc=$?
check "bmc apply --reboot-grace: refused, exit 1 (rc=$rc)" [ $rc = 1 ]
check "  saying it only matters to --resume" grep -q "reboot-grace only matters to --resume" "$work/e"
check "secret in no output" bash -c "! grep -rq 'e2e-PLANTED-secret' '$work'/o '$work'/e"
[ $fails = 0 ] && echo "all passed" || { echo "$fails failed"; exit 1; }
