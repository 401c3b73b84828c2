#!/usr/bin/env bash
# One exit code table (schemas/exit_codes.cc): the README's table is `plumb exit-codes`, every
# verb's --help ends with exactly its rows, the codes pipelines rely on are what they were
# promised to be, and each verb reachable without a testbed exits with the code the table gives
# the outcome it reached. (gather's 3, apply's 3/130 and bmc's are checked the same way, against
# `plumb exit-codes --format json`, by the integration tests that reach them.)
set -uo pipefail
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
P() { "$PLUMB" "$@"; }
RO=(--no-scheduler --no-bmc)

expect_rc 0 "plumb exit-codes --format json" -- P exit-codes --format json
cp "$E2E_OUT" "$E2E_TMP/table.json"
# code VERB OUTCOME: the table's code ("*" rows hold for every verb).
code() {
  python3 - "$E2E_TMP/table.json" "$1" "$2" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
verb, outcome = sys.argv[2], sys.argv[3]
own = [r["code"] for r in rows if r["command"] == verb and r["outcome"] == outcome]
star = [r["code"] for r in rows if r["command"] == "*" and r["outcome"] == outcome]
print((own or star)[0])
PY
}

# The promises pipelines are built on do not move.
for want in "plan changes 2" "drift drift 2" "drift in-sync 0" "gather partial 3" \
            "apply interrupted 130" "apply paused 3" "validate invalid 1" "diff changes 2"; do
  set -- $want
  got=$(code "$1" "$2")
  [[ $got == "$3" ]] && pass "$1 $2 is $3" || fail "$1 $2 is $got, promised $3"
done

# README's table is the command's output.
expect_rc 0 "plumb exit-codes prints the table" -- P exit-codes
cp "$E2E_OUT" "$E2E_TMP/table.md"
sed -n '/^<!-- plumb exit-codes -->$/,/^<!-- \/plumb exit-codes -->$/p' "$PLUMB_SRC/README.md" |
  sed '1d;$d' >"$E2E_TMP/readme.md"
if [[ -s $E2E_TMP/readme.md ]] && diff -u "$E2E_TMP/readme.md" "$E2E_TMP/table.md"; then
  pass "README's exit code table is plumb exit-codes' output"
else
  fail "README's exit code table differs (regenerate it with: plumb exit-codes)"
fi

# Every verb's --help lists its rows, and no other codes.
for verb in $(python3 -c 'import json,sys; print(" ".join(sorted({r["command"].replace(" ","_") for r in json.load(open(sys.argv[1])) if r["command"]!="*"})))' "$E2E_TMP/table.json"); do
  verb=${verb//_/ }
  # shellcheck disable=SC2086
  P $verb --help >"$E2E_TMP/help" 2>&1
  if python3 - "$E2E_TMP/table.json" "$verb" "$E2E_TMP/help" <<'PY'
import json, re, sys
rows = json.load(open(sys.argv[1])); verb = sys.argv[2]; help_text = open(sys.argv[3]).read()
assert "Exit codes:" in help_text, "no 'Exit codes:' section"
section = help_text.split("Exit codes:", 1)[1]
listed = [(int(m.group(1)), m.group(2).strip()) for m in re.finditer(r"^\s+(\d+)  (.+)$", section, re.M)]
own = [r for r in rows if r["command"] == verb]
for r in own:
    assert (r["code"], r["meaning"]) in listed, ("missing", r)
allowed = {r["code"] for r in rows if r["command"] in (verb, "*")}
assert all(c in allowed for c, _ in listed), ("unknown code listed", listed)
PY
  then pass "plumb $verb --help lists its exit codes"; else fail "plumb $verb --help and the table disagree"; fi
done
P --help >"$E2E_TMP/main-help" 2>&1
expect_grep '130  interrupted' "$E2E_TMP/main-help" "plumb --help summarises the codes"

# Behaviour, each code from the table.
GEN() { python3 "$PLUMB_SRC/bench/plan/gen.py" --template "$PLUMB_SRC/bench/plan/template-facts.json" --nodes 4 "$@" >/dev/null; }
GEN --out "$E2E_TMP/s" --no-upgrade --drift-every 0
GEN --out "$E2E_TMP/d" --drift-every 2
GEN --out "$E2E_TMP/u" --no-upgrade --drift-every 0 --unreadable gpu00002
S=$E2E_TMP/s D=$E2E_TMP/d U=$E2E_TMP/u
expect_rc "$(code validate ok)" "validate: valid" -- P validate --repo "$S/repo"
mkdir -p "$E2E_TMP/bad" && cp -r "$S/repo/." "$E2E_TMP/bad/"
echo "nodes: [ {name: x" >"$E2E_TMP/bad/inventory.yaml"
git -C "$E2E_TMP/bad" add -A && git -C "$E2E_TMP/bad" commit -qm broken
expect_rc "$(code validate invalid)" "validate: invalid" -- P validate --repo "$E2E_TMP/bad"
expect_rc "$(code plan in-sync)" "plan: no changes" -- P plan --repo "$S/repo" --facts "$S/facts.json" "${RO[@]}" --detailed-exitcode
expect_rc "$(code plan changes)" "plan: changes" -- P plan --repo "$D/repo" --facts "$D/facts.json" "${RO[@]}" --detailed-exitcode
expect_rc "$(code plan no-verdict)" "plan: nothing found, a node unreadable" -- P plan --repo "$U/repo" --facts "$U/facts.json" "${RO[@]}" --detailed-exitcode
expect_rc "$(code plan refused)" "plan: a ref that does not exist" -- P plan --repo "$S/repo" --ref no-such-ref --facts "$S/facts.json" "${RO[@]}"
expect_rc "$(code drift in-sync)" "drift: in sync" -- P drift --repo "$S/repo" --facts "$S/facts.json" --no-bmc
expect_rc "$(code drift drift)" "drift: drift" -- P drift --repo "$D/repo" --facts "$D/facts.json" --no-bmc
expect_rc "$(code drift no-verdict)" "drift: nothing found, a node unreadable" -- P drift --repo "$U/repo" --facts "$U/facts.json" --no-bmc
expect_rc "$(code diff in-sync)" "diff: nothing changes" -- P diff --repo "$S/repo" HEAD HEAD --detailed-exitcode
cp "$D/repo/stacks/bench.yaml" "$S/repo/stacks/bench.yaml"
git -C "$S/repo" commit -qam upgrade
expect_rc "$(code diff changes)" "diff: a pin changes" -- P diff --repo "$S/repo" HEAD~1 HEAD --detailed-exitcode
# Output that cannot be written is an error (1), as for plan and drift, never the verdict.
if [[ -w /dev/full ]]; then
  expect_rc 1 "diff to a full stdout (/dev/full): 1, not 2" -- \
    bash -c "'$PLUMB' diff --repo '$S/repo' HEAD~1 HEAD --detailed-exitcode >/dev/full"
  expect_grep "cannot write the output" "$E2E_ERR" "the error names the output"
fi
finish
