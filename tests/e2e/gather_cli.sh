#!/usr/bin/env bash
# plumb gather's command line without any node: what fails before a connection is made (bad
# --limit, --fanout, --format, an invalid repo) exits 1 with a clear message and contacts nothing;
# --print-probe-script shows the one script every node runs, a section per in-band module.
set -u
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
make_cluster_repo "$PLUMB_SRC/examples/minimal" "$E2E_TMP/repo" >/dev/null
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); echo "ok   $1"; else fail=$((fail + 1)); echo "FAIL $1"; fi; }
run() { "$PLUMB" gather --repo "$E2E_TMP/repo" "$@" >"$E2E_OUT" 2>"$E2E_ERR"; RC=$?; }

# Every case below must stop before any SSH connection: the example's addresses are .example
# names, and nothing may resolve them; a connection attempt would show as ssh.* in the output.
run --limit 'gpu9*'
check "--limit matching no node exits 1" '[[ $RC == 1 ]]'
check "... naming the pattern" 'grep -qF "gpu9*" "$E2E_ERR"'
check "... before contacting anything" '! grep -q "ssh\." "$E2E_OUT" "$E2E_ERR"'
run --limit '@nosuchgroup'
check "--limit with an unknown group exits 1 naming it" '[[ $RC == 1 ]] && grep -q nosuchgroup "$E2E_ERR"'
run --fanout 0
check "--fanout 0 is refused" '[[ $RC == 1 ]] && grep -q fanout "$E2E_ERR"'
run --format yaml
check "--format other than text|json is refused" '[[ $RC == 1 ]]'
"$PLUMB" gather --repo "$E2E_TMP/nothere" >"$E2E_OUT" 2>"$E2E_ERR"; RC=$?
check "a missing repo exits 1" '[[ $RC == 1 ]]'

run --print-probe-script
check "--print-probe-script exits 0" '[[ $RC == 0 ]]'
for m in kernel os nvidia_driver cuda nccl ofed packages sysctl services kernel_modules infiniband marker; do
  check "the probe script has a '$m' section" 'grep -q ":begin $m" "$E2E_OUT"'
done
nonce1=$(grep -oE '@plumb:[0-9a-f]+' "$E2E_OUT" | head -1)
run --print-probe-script
nonce2=$(grep -oE '@plumb:[0-9a-f]+' "$E2E_OUT" | head -1)
check "each run has a fresh nonce" '[[ -n $nonce1 && $nonce1 != "$nonce2" ]]'
check "the probe script is sh that parses" 'sh -n "$E2E_OUT"'
echo "$pass passed, $fail failed"
((fail == 0))
