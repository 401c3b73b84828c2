#!/usr/bin/env bash
# plan / drift / diff from recorded facts (no testbed): exit codes exact, every drift format
# valid, repair vs intent, waivers. The facts are a real testbed node's snapshot
# (bench/plan/template-facts.json) copied to 8 synthetic nodes by bench/plan/gen.py.
set -uo pipefail
. "$PLUMB_SRC/tests/e2e/lib.sh"
. "$PLUMB_SRC/tests/third_party_schemas.sh"
make_tmp
GEN() { python3 "$PLUMB_SRC/bench/plan/gen.py" --template "$PLUMB_SRC/bench/plan/template-facts.json" --nodes 8 "$@" >/dev/null; }
P() { "$PLUMB" "$@"; }
RO=(--no-scheduler --no-bmc)

GEN --out "$E2E_TMP/sync" --no-upgrade --drift-every 0
S=$E2E_TMP/sync
expect_rc 0 "plan, nothing to change: --detailed-exitcode 0" -- P plan --repo "$S/repo" --facts "$S/facts.json" "${RO[@]}" --detailed-exitcode
expect_grep "No changes: 8 node\(s\) in sync" "$E2E_OUT" "plan says no changes"
expect_rc 0 "drift, in sync: 0" -- P drift --repo "$S/repo" --facts "$S/facts.json" --no-bmc

GEN --out "$E2E_TMP/up" --drift-every 4 --marker
U=$E2E_TMP/up
expect_rc 2 "plan with changes: --detailed-exitcode 2" -- P plan --repo "$U/repo" --facts "$U/facts.json" "${RO[@]}" --detailed-exitcode --out "$E2E_TMP/plan.json"
expect_grep '^~ gpu\[00001-00003,00005-00007\] \(6 nodes\)  \[reboot\]' "$E2E_OUT" "identical nodes collapsed"
expect_grep '~ nvidia.driver: 535.161.08 -> 550.90.07  \(reboot, repair\)|~ nvidia.driver: 535.161.08 -> 550.90.07  \(reboot, intent\)' "$E2E_OUT" "driver change with disruption and reason"
expect_grep '~ sysctl.vm.swappiness: 1 -> 60  \(none, repair\)' "$E2E_OUT" "hand-made sysctl change is a repair"
expect_grep '^Peak nodes out at once: ' "$E2E_OUT" "peak nodes out"
expect_grep '"format_version": 2' "$E2E_TMP/plan.json" "plan file written"
expect_rc 0 "plan without --detailed-exitcode: 0" -- P plan --repo "$U/repo" --facts "$U/facts.json" "${RO[@]}"
expect_rc 2 "plan --format json: 2" -- P plan --repo "$U/repo" --facts "$U/facts.json" "${RO[@]}" --format json --detailed-exitcode
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["format_version"]==2 and len(j["nodes"])==8' "$E2E_OUT" \
  && pass "plan json parses, 8 nodes" || fail "plan json parses, 8 nodes"
expect_rc 2 "plan --format markdown: 2, and the plan file written" -- P plan --repo "$U/repo" --facts "$U/facts.json" \
  "${RO[@]}" --format markdown --detailed-exitcode --out "$E2E_TMP/plan-md.json"
expect_grep '^### plumb plan: cluster `bench` at `[0-9a-f]{12}`' "$E2E_OUT" "markdown: the heading"
expect_grep '^\*\*Plan: 8 node\(s\) to change \(8 reboot\)' "$E2E_OUT" "markdown: the summary line first"
expect_grep '^<details><summary><code>gpu\[00001-00003,00005-00007\]</code> \(6 nodes\) — reboot</summary>' "$E2E_OUT" "markdown: nodes collapsed by host list"
expect_grep 'the whole plan: the plan file `plan-md.json`' "$E2E_OUT" "markdown: points at the plan file"
[[ -s $E2E_TMP/plan-md.json ]] && pass "markdown: the plan file is written too" || fail "markdown: the plan file is written too"

expect_rc 2 "drift found: 2" -- P drift --repo "$U/repo" --facts "$U/facts.json" --no-bmc
for fmt in json junit sarif prom html; do
  expect_rc 2 "drift --format $fmt: 2" -- P drift --repo "$U/repo" --facts "$U/facts.json" --no-bmc --format "$fmt" --out "$E2E_TMP/drift.$fmt"
done
if ! command -v xmllint >/dev/null; then
  fail "xmllint missing (scripts/install-deps.sh installs libxml2-utils)"
elif xsd=$(third_party_schema junit-10.xsd "the JUnit XML schema"); then
  expect_rc 0 "junit validates against junit-10.xsd" -- xmllint --noout --schema "$xsd" "$E2E_TMP/drift.junit"
fi
python3 - "$E2E_TMP/drift.sarif" "$E2E_TMP/drift.json" <<'PY' && pass "sarif/json: results at stacks/bench.yaml, repair vs intent" || fail "sarif/json content"
import json, sys
s = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))
r = s["runs"][0]["results"]
assert s["version"] == "2.1.0" and r
assert all(x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "stacks/bench.yaml" for x in r)
c = {(n["node"], k["key"]): k for n in d["nodes"] for k in n["checks"]}
assert c[("gpu00004", "sysctl.vm.swappiness")]["reason"] == "repair"
assert c[("gpu00001", "sysctl.vm.swappiness")]["status"] == "in_sync"
assert d["exit_code"] == 2
PY
expect_grep '^plumb_drift\{cluster="bench",node="gpu00004",module="sysctl"\} 1$' "$E2E_TMP/drift.prom" "prom gauge for the drifted module"

# Waived: the hand tuning on gpu00004/8 is waived, the driver is not -> still 2; waive both -> 0.
GEN --out "$E2E_TMP/w" --no-upgrade --drift-every 4 --marker
W=$E2E_TMP/w
printf 'waivers:\n  - { nodes: "gpu0000[4-8]", keys: "sysctl.*", reason: "tuning trial", owner: ops, expires: 2099-12-31 }\n' >"$W/repo/waivers.yaml"
git -C "$W/repo" add -A && git -C "$W/repo" commit -qm waive
expect_rc 0 "all drift waived: 0 (never 2 for nothing to do)" -- P drift --repo "$W/repo" --facts "$W/facts.json" --no-bmc
expect_grep 'waived: tuning trial' "$E2E_OUT" "waived drift is shown as waived"
sed -i 's/2099-12-31/2020-01-01/' "$W/repo/waivers.yaml" && git -C "$W/repo" commit -qam expire
expect_rc 2 "expired waiver counts as drift: 2" -- P drift --repo "$W/repo" --facts "$W/facts.json" --no-bmc
expect_grep 'expired on 2020-01-01' "$E2E_OUT" "expired waiver warns"

# Unreadable nodes: partial (3) when nothing else; drift (2) wins.
GEN --out "$E2E_TMP/u" --no-upgrade --drift-every 0 --unreadable gpu00002
expect_rc 1 "drift, one node unreadable, no drift: 1" -- P drift --repo "$E2E_TMP/u/repo" --facts "$E2E_TMP/u/facts.json" --no-bmc
expect_rc 1 "plan --detailed-exitcode, no changes, one unreadable: 1" -- P plan --repo "$E2E_TMP/u/repo" --facts "$E2E_TMP/u/facts.json" "${RO[@]}" --detailed-exitcode
expect_grep 'PLAN INCOMPLETE' "$E2E_OUT" "plan says incomplete"
GEN --out "$E2E_TMP/u2" --drift-every 0 --unreadable gpu00002
expect_rc 2 "drift and an unreadable node: 2" -- P drift --repo "$E2E_TMP/u2/repo" --facts "$E2E_TMP/u2/facts.json" --no-bmc

# Errors: 1.
expect_rc 1 "bad ref: 1" -- P plan --repo "$S/repo" --ref no-such-ref --facts "$S/facts.json" "${RO[@]}" --detailed-exitcode
echo '{"format":"nope"}' >"$E2E_TMP/bad.json"
expect_rc 1 "bad facts snapshot: 1" -- P drift --repo "$S/repo" --facts "$E2E_TMP/bad.json" --no-bmc
expect_rc 1 "unknown --limit term: 1" -- P plan --repo "$S/repo" --facts "$S/facts.json" "${RO[@]}" --limit 'nosuch*'

# diff between two commits.
cp "$U/repo/stacks/bench.yaml" "$S/repo/stacks/bench.yaml"
git -C "$S/repo" commit -qam upgrade
expect_rc 2 "diff --detailed-exitcode with changes: 2" -- P diff --repo "$S/repo" HEAD~1 HEAD --detailed-exitcode --format markdown
expect_grep '^#### `gpu\[00001-00008\] \(8 nodes\)` \[reboot\]' "$E2E_OUT" "markdown collapses identical nodes, with their disruption"
expect_grep '^\| ~ \| `nvidia.driver` \| `535.161.08` \| `550.90.07` \| reboot \| `stacks/bench.yaml:4:13` \|$' "$E2E_OUT" "markdown row with the disruption and the pin's location"
expect_grep '^\| drain \+ reboot \| `gpu\[00001-00008\] \(8 nodes\)` \|$' "$E2E_OUT" "markdown disruption summary"
expect_rc 0 "diff in text" -- P diff --repo "$S/repo" HEAD~1 HEAD
expect_grep '^~ gpu\[00001-00008\] \(8 nodes\)  \[reboot\]$' "$E2E_OUT" "text: each node group with its disruption"
expect_grep '^  drain \+ reboot     gpu\[00001-00008\] \(8 nodes\)$' "$E2E_OUT" "text: the disruption summary"
expect_rc 0 "diff of a commit with itself: 0" -- P diff --repo "$S/repo" HEAD HEAD --detailed-exitcode
# Output files: written whole or not at all. A report goes to a private temp file renamed over
# the target (mode as any new file: umask), and a directory that cannot be written is an error
# that leaves nothing behind.
( umask 022; P drift --repo "$U/repo" --facts "$U/facts.json" --no-bmc --format junit --out "$E2E_TMP/mode.xml" >/dev/null 2>&1 )
[[ $(stat -c %a "$E2E_TMP/mode.xml") == 644 ]] && pass "--out file gets the umask's mode (644)" \
  || fail "--out file mode is $(stat -c %a "$E2E_TMP/mode.xml"), not 644"
mkdir -p "$E2E_TMP/ro" && chmod 555 "$E2E_TMP/ro"
if [[ $(id -u) -eq 0 ]] && touch "$E2E_TMP/ro/probe" 2>/dev/null; then
  rm -f "$E2E_TMP/ro/probe"
  chattr +i "$E2E_TMP/ro" 2>/dev/null || true   # root ignores modes; an immutable dir it cannot
fi
if touch "$E2E_TMP/ro/probe" 2>/dev/null; then
  rm -f "$E2E_TMP/ro/probe"
  pass "(unwritable-directory check skipped: this filesystem lets us write anyway)"
else
  expect_rc 1 "drift --out into an unwritable directory: 1" -- P drift --repo "$U/repo" \
    --facts "$U/facts.json" --no-bmc --format json --out "$E2E_TMP/ro/d.json"
  expect_grep "output.write|cannot create a temp file" "$E2E_ERR" "the error names the output"
  [[ -z $(ls -A "$E2E_TMP/ro") ]] && pass "nothing left in the directory" || fail "left: $(ls -A "$E2E_TMP/ro")"
fi
chattr -i "$E2E_TMP/ro" 2>/dev/null || true
chmod 755 "$E2E_TMP/ro"
if [[ -w /dev/full ]]; then
  expect_rc 1 "drift --format json to a full stdout (/dev/full): 1, not 2" -- \
    bash -c "'$PLUMB' drift --repo '$U/repo' --facts '$U/facts.json' --no-bmc --format json >/dev/full"
fi

finish
