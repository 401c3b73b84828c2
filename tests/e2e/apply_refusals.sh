#!/usr/bin/env bash
# apply refuses before touching anything: a tampered plan file (digest mismatch) and a plan whose
# --ref has moved since it was made. No testbed: the refusals must come before any node, drainer
# or journal run is touched, which is what this proves (the nodes' .example addresses are never
# resolved, and the journal records no run).
set -uo pipefail
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
python3 "$PLUMB_SRC/bench/plan/gen.py" --template "$PLUMB_SRC/bench/plan/template-facts.json" \
  --nodes 4 --out "$E2E_TMP/up" >/dev/null
U=$E2E_TMP/up J=$E2E_TMP/journal.db
expect_rc 2 "a plan with changes is written" -- "$PLUMB" plan --repo "$U/repo" --facts "$U/facts.json" \
  --no-scheduler --no-bmc --detailed-exitcode --out "$E2E_TMP/plan.json"

python3 - "$E2E_TMP/plan.json" "$E2E_TMP/tampered.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
plan["nodes"][0]["actions"][0]["after"] = "999.99.99"   # someone edits the reviewed plan
json.dump(plan, open(sys.argv[2], "w"), indent=2)
PY
expect_rc 1 "tampered plan refused" -- "$PLUMB" apply "$E2E_TMP/tampered.json" --repo "$U/repo" \
  --journal "$J" --auto-approve
expect_grep "digest mismatch" "$E2E_ERR" "the refusal names the digest mismatch"

git -C "$U/repo" commit -q --allow-empty -m "a newer commit on the branch"
expect_rc 1 "plan whose --ref moved refused" -- "$PLUMB" apply "$E2E_TMP/plan.json" --repo "$U/repo" \
  --ref HEAD --journal "$J" --auto-approve
expect_grep "now resolves to" "$E2E_ERR" "the refusal names both commits"

# apply --ref plans with plan's own read path: --limit takes plan's patterns, and a pattern
# naming nothing is an error before any node is read (it used to be a comma list, and an
# unknown name quietly selected no node: "nothing to apply").
expect_rc 1 "apply --ref --limit with an unknown group refused" -- "$PLUMB" apply --repo "$U/repo" \
  --ref HEAD --limit '@nosuchgroup' --journal "$J" --auto-approve
expect_grep "nosuchgroup" "$E2E_ERR" "the refusal names the unknown group"

if [[ -f $J ]]; then
  expect_rc 0 "runs lists the journal" -- "$PLUMB" runs --journal "$J" --format json
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=j.get("runs", j) if isinstance(j, dict) else j; sys.exit(1 if r else 0)' "$E2E_OUT" \
    && pass "no run was recorded by a refused apply" || fail "a refused apply recorded a run"
else
  pass "no journal was even created by a refused apply"
fi
finish
