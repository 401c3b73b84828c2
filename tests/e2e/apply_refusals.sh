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

# The reviewed plan after the merge: the branch moved on, but wants the same of every planned
# node: accepted at the new commit (shown, then it stops at the question: no terminal here).
git -C "$U/repo" commit -q --allow-empty -m "merge: nothing the planned nodes want changed"
expect_rc 1 "a plan at a newer commit that wants the same: accepted (stops at the question)" -- \
  "$PLUMB" apply "$E2E_TMP/plan.json" --repo "$U/repo" --ref HEAD --journal "$J"
expect_grep "applying it there if every planned node wants the same" "$E2E_ERR" "  names both commits"
expect_grep "refusing to apply without confirmation" "$E2E_ERR" "  got as far as the question"
expect_grep "Batches:" "$E2E_OUT" "  the plan was shown"
# The branch changed what planned nodes want: refused before anything, naming nodes, key, file.
sed -i 's/"kernel": "[^"]*"/"kernel": "6.9.9-changed-after-review"/' "$U"/repo/stacks/*.yaml
git -C "$U/repo" commit -q -am "a change nobody reviewed in this plan"
expect_rc 1 "a plan at a newer commit that wants something else: refused" -- "$PLUMB" apply \
  "$E2E_TMP/plan.json" --repo "$U/repo" --ref HEAD --journal "$J" --auto-approve
expect_grep "does not hold at commit" "$E2E_ERR" "  says the plan does not hold there"
expect_grep "gpu\\[00001-00004\\] \\(4 nodes\\)|gpu\\[00001-00004\\]: the desired state" "$E2E_ERR" "  names the nodes"
expect_grep "kernel: .* -> 6.9.9-changed-after-review" "$E2E_ERR" "  names the key and both values"
expect_grep "changed: .*stacks/" "$E2E_ERR" "  names the file that changed"
git -C "$U/repo" reset -q --hard HEAD~2

# apply --ref plans with plan's own read path: --limit takes plan's patterns, and a pattern
# naming nothing is an error before any node is read (it used to be a comma list, and an
# unknown name quietly selected no node: "nothing to apply").
expect_rc 1 "apply --ref --limit with an unknown group refused" -- "$PLUMB" apply --repo "$U/repo" \
  --ref HEAD --limit '@nosuchgroup' --journal "$J" --auto-approve
expect_grep "nosuchgroup" "$E2E_ERR" "the refusal names the unknown group"

# A plan re-sealed after its policy was loosened and its batches merged: the digest is valid,
# but the commit it names says otherwise. Refused before any node is touched, naming the fields.
python3 - "$E2E_TMP/plan.json" "$E2E_TMP/resealed.json" <<'PY'
import hashlib, json, sys
plan = json.load(open(sys.argv[1]))
for p in plan["rollouts"].values():
    p["max_unavailable"] = "100%"
nodes = [n for b in plan["batches"] for n in b["nodes"]]
plan["batches"] = [dict(plan["batches"][0], nodes=nodes, budget=len(nodes))]
body = {k: v for k, v in plan.items() if k != "digest"}
canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
plan["digest"] = "sha256:" + hashlib.sha256(canon.encode()).hexdigest()
json.dump(plan, open(sys.argv[2], "w"), indent=2)
PY
expect_rc 1 "a re-sealed plan with a loosened policy is refused" -- "$PLUMB" apply \
  "$E2E_TMP/resealed.json" --repo "$U/repo" --journal "$J" --auto-approve
expect_grep "does not follow from commit" "$E2E_ERR" "the refusal says the plan does not follow from its commit"
expect_grep "rollouts.rolling.max_unavailable" "$E2E_ERR" "it names the loosened field"
expect_grep "takes 4 node\\(s\\) out at once" "$E2E_ERR" "it names the merged batch"

# Every flag acts or is refused: none is silently ignored.
refused() { # DESC GREP -- ARGS...
  local desc=$1 want=$2; shift 3
  expect_rc 1 "$desc" -- "$PLUMB" apply "$@"
  expect_grep "$want" "$E2E_ERR" "  says why: $want"
}
refused "--resume with --limit" "--limit does nothing with --resume" -- --repo "$U/repo" --journal "$J" --resume --limit n1
refused "--resume with --ref" "--ref does nothing with --resume" -- --repo "$U/repo" --journal "$J" --resume --ref HEAD
refused "--resume with --auto-approve" "--auto-approve does nothing with --resume" -- --repo "$U/repo" --journal "$J" --resume --auto-approve
refused "--resume with --plan-out" "--plan-out does nothing with --resume" -- --repo "$U/repo" --journal "$J" --resume --plan-out x.json
refused "--force-unlock with --limit" "--limit does nothing with --force-unlock" -- --journal "$J" --force-unlock r1 --limit n1
refused "--force-unlock with a plan file" "a plan file does nothing with --force-unlock" -- "$E2E_TMP/plan.json" --journal "$J" --force-unlock r1
refused "--force-unlock with --reboot-timeout" "--reboot-timeout does nothing with --force-unlock" -- --journal "$J" --force-unlock r1 --reboot-timeout 5
refused "--dead-owner without --force-unlock" "--dead-owner confirms a --force-unlock" -- "$E2E_TMP/plan.json" --journal "$J" --dead-owner h:1
refused "--retry-failed with a plan file" "--retry-failed plans the failed nodes anew" -- "$E2E_TMP/plan.json" --journal "$J" --retry-failed r1
refused "--resume with --retry-failed" "give one of them" -- --journal "$J" --resume --retry-failed r1
refused "--working-tree" "apply never reads uncommitted files" -- --repo "$U/repo" --journal "$J" --working-tree
refused "--force-unlock of a run that holds nothing" "holds no lock" -- --journal "$J" --force-unlock 20270101-000000-0000
# A saved plan without a terminal and without --auto-approve is shown, then refused.
"$PLUMB" apply "$E2E_TMP/plan.json" --repo "$U/repo" --journal "$J" </dev/null >"$E2E_OUT" 2>"$E2E_ERR" && rc=0 || rc=$?
[[ $rc == 1 ]] && pass "a saved plan is not applied unconfirmed (rc=1)" || fail "a saved plan applied unconfirmed (rc=$rc)"
expect_grep "refusing to apply without confirmation" "$E2E_ERR" "  the refusal says how to confirm"
expect_grep "Batches:" "$E2E_OUT" "  the plan was shown above the question"
# --limit naming no node of the plan is an error naming the term.
refused "--limit naming no node of a saved plan" "matches no node of the plan" -- "$E2E_TMP/plan.json" --repo "$U/repo" --journal "$J" --limit 'nosuch[1-2]' --auto-approve

if [[ -f $J ]]; then
  expect_rc 0 "runs lists the journal" -- "$PLUMB" runs --journal "$J" --format json
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=j.get("runs", j) if isinstance(j, dict) else j; sys.exit(1 if r else 0)' "$E2E_OUT" \
    && pass "no run was recorded by a refused apply" || fail "a refused apply recorded a run"
else
  pass "no journal was even created by a refused apply"
fi
finish
