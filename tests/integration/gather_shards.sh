#!/usr/bin/env bash
# Sharded gathers: `plumb gather --shard i/4` run as four parallel "runners" read every node
# exactly once between them (the split documented: sha256(name) % n), `plumb facts merge` puts
# them back into the snapshot a single gather gives (same nodes, same facts digests), and plan
# and drift give the same verdicts from either. Merge refuses what it cannot merge honestly:
# a missing shard, a node twice, parts of different commits, each with nothing written.
. "$(dirname "$0")/lib/gather.sh"
gt_up 8
# A repo with a stack (gt_up's has nodes only): plan and drift judge the merged facts too.
rm -rf "$REPO"
"$TB" cluster-repo "$REPO" --stack "$PLUMB_SRC/tests/integration/data/plan/baseline.yaml" \
  --rollout "$PLUMB_SRC/tests/integration/data/plan/rolling.yaml" >/dev/null
"$TB" state n3 driver=550.90.07 fabricmanager=550.90.07 >/dev/null   # one node drifts
S=$GT_TMP/shards
mkdir -p "$S"
head=$(git -C "$REPO" rev-parse HEAD)

# Four runners at once, each its quarter.
pids=()
for i in 1 2 3 4; do
  "$TB" exec "$PLUMB" gather --repo "$REPO" --shard "$i/4" --facts-out "$S/s$i.json" \
    >"$S/out$i" 2>"$S/err$i" &
  pids+=($!)
done
rcs=()
for p in "${pids[@]}"; do
  set +e; wait "$p"; rcs+=($?); set -e
done
check "the four shard gathers exited 0 (${rcs[*]})" test "${rcs[*]}" = "0 0 0 0"
check "each runner says which part it read" grep -q "^shard 2/4: [0-9]* of 8 selected node(s)" "$S/err2"

python3 - "$S" "$head" <<'PY' >"$S/split-checks"
import hashlib, json, sys
d, head = sys.argv[1], sys.argv[2]
seen = {}
for i in range(1, 5):
    j = json.load(open(f"{d}/s{i}.json"))
    print(("ok   " if j.get("shard") == f"{i}/4" else "FAIL ") + f"s{i}.json records shard {i}/4 ({j.get('shard')})")
    print(("ok   " if j.get("commit") == head else "FAIL ") + f"s{i}.json records the commit it was gathered at")
    for name in j["nodes"]:
        want = int(hashlib.sha256(name.encode()).hexdigest()[:16], 16) % 4 + 1
        print(("ok   " if want == i else "FAIL ") + f"{name} is in shard {i}, as sha256(name) % 4 + 1 = {want} says")
        print(("ok   " if name not in seen else "FAIL ") + f"{name} is in one shard only")
        seen[name] = i
want = {f"n{k}" for k in range(1, 9)}
print(("ok   " if set(seen) == want else "FAIL ") + f"the shards hold every node: {sorted(seen)}")
PY
while read -r verdict rest; do
  check "$rest" test "$verdict" = ok
done <"$S/split-checks"

# Merged, and compared with one gather of all nodes.
set +e
"$PLUMB" facts merge "$S"/s{1,2,3,4}.json >"$S/all.json" 2>"$S/merge.err"
rc=$?
set -e
check "facts merge of the four shards exits 0" test "$rc" = 0
check "merge says what it merged" grep -q "merged 4 part(s): 8 node(s) (8 read), commit ${head:0:12}" "$S/merge.err"
gather --facts-out "$S/one.json" >/dev/null
check "a single gather of every node exits 0" test "$RC" = 0
python3 - "$S/all.json" "$S/one.json" "$head" <<'PY' >"$S/merge-checks"
import json, sys
a, o, head = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
print(("ok   " if sorted(a["nodes"]) == sorted(o["nodes"]) else "FAIL ") + "merged and single gather hold the same nodes")
for name in sorted(o["nodes"]):
    same = a["nodes"].get(name, {}).get("facts_digest") == o["nodes"][name]["facts_digest"]
    print(("ok   " if same else "FAIL ") + f"{name}: merged facts digest equals the single gather's")
print(("ok   " if a.get("commit") == head and "shard" not in a else "FAIL ") + "the merge records the commit and no shard")
print(("ok   " if a.get("format") == "plumb.observed/v1" else "FAIL ") + "the merge is a facts snapshot")
PY
while read -r verdict rest; do
  check "$rest" test "$verdict" = ok
done <"$S/merge-checks"

# plan and drift from the merge say what they say from the single gather.
verdict() { # SNAPSHOT VERB [ARGS...] -> "rc|<nodes and their state, from the JSON report>"
  local out rc facts=$1 verb=$2
  shift 2
  set +e
  out=$("$PLUMB" "$verb" --repo "$REPO" --facts "$facts" --no-bmc --format json "$@" 2>/dev/null)
  rc=$?
  set -e
  printf '%s|' "$rc"
  printf '%s' "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
def strip(v):
    # What a report records about its own making (times, the snapshot it read) is not a verdict.
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in ("generated_at", "gathered_at", "created_at", "facts_file", "facts_sha256", "digest", "plan_digest", "time")}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
print(json.dumps(strip(j.get("nodes", j)), sort_keys=True))'
}
for verb in drift plan; do
  extra=()
  [[ $verb == plan ]] && extra=(--no-scheduler)
  m=$(verdict "$S/all.json" "$verb" "${extra[@]}")
  o=$(verdict "$S/one.json" "$verb" "${extra[@]}")
  check "$verb from the merge equals $verb from the single gather (rc ${m%%|*})" test "$m" = "$o"
  check "$verb finds n3's driver drift in the merge" grep -q 550.90.07 <<<"$m"
done

# Refusals: nothing written, every problem named.
refuse() { # DESC EXPECTED-TEXT ARGS...
  local desc=$1 want=$2
  shift 2
  rm -f "$S/refused.json"
  set +e
  "$PLUMB" facts merge -o "$S/refused.json" "$@" >"$S/r.out" 2>"$S/r.err"
  local rc=$?
  set -e
  check "$desc: exit 1" test "$rc" = 1
  check "$desc: says '$want'" grep -qF -- "$want" "$S/r.err"
  check "$desc: nothing written" test ! -e "$S/refused.json"
}
refuse "a shard missing" "shard(s) 4/4 are missing" "$S"/s{1,2,3}.json
refuse "a shard given twice" "are in both '$S/s2.json' and '$S/s2.json'" "$S"/s{1,2,2,3,4}.json
refuse "a part that is not a snapshot" "$S/out1" "$S"/s{1,2,3}.json "$S/out1"

set +e
"$PLUMB" facts merge --allow-missing-shards "$S"/s{1,2,3}.json -o "$S/partial.json" 2>"$S/partial.err"
rc=$?
set -e
check "--allow-missing-shards merges three of four (exit $rc), with a warning" \
  bash -c "test $rc = 0 && grep -q 'warning: .*4/4' '$S/partial.err'"
n4=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["nodes"]))' "$S/partial.json")
s4=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["nodes"]))' "$S/s4.json")
check "the partial merge lacks exactly shard 4's nodes ($n4 = 8 - $s4)" test "$n4" = "$((8 - s4))"
set +e
"$PLUMB" drift --repo "$REPO" --facts "$S/partial.json" --no-bmc >"$S/partial-drift" 2>&1
rc=$?
set -e
# n3 (shard 3) drifts: the verdict is drift (2), with shard 4's nodes listed as not read.
check "drift of the partial merge: drift (exit $rc), shard 4's $s4 node(s) unreadable: not gathered" \
  bash -c "test $rc = 2 && grep -q 'unreadable: not gathered' '$S/partial-drift' &&
           grep -q ', $s4 node(s) unreadable' '$S/partial-drift'"

# A shard gathered after the repo moved: parts of two commits.
echo "# moved" >>"$REPO/inventory.yaml"
gt_commit "moved"
"$TB" exec "$PLUMB" gather --repo "$REPO" --shard 4/4 --facts-out "$S/s4-new.json" >/dev/null 2>&1 || true
refuse "parts of two commits" "different cluster repo commits" "$S"/s{1,2,3}.json "$S/s4-new.json"
check "the commits are named with their files" grep -qF "${head:0:12}: '$S/s1.json'" "$S/r.err"
set +e
"$PLUMB" facts merge --allow-mixed-commits "$S"/s{1,2,3}.json "$S/s4-new.json" >"$S/mixed.json" 2>/dev/null
rc=$?
set -e
check "--allow-mixed-commits merges them, with no commit recorded" \
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if sys.argv[2] == "0" and "commit" not in j and len(j["nodes"]) == 8 else 1)' "$S/mixed.json" "$rc"

# Shards of different selections: 1/2 of n[1-4] and 2/2 of n[1-6] look like one whole split,
# and lack n5, n6's other half.
for spec in "n[1-4] 1/2 l1" "n[1-6] 2/2 l2" "n[1-4] 2/2 l3"; do
  read -r lim sh f <<<"$spec"
  "$TB" exec "$PLUMB" gather --repo "$REPO" --limit "$lim" --shard "$sh" --facts-out "$S/$f.json" >/dev/null 2>&1 || true
done
check "a shard records the selection it split (--limit n[1-4]: 4 nodes)" \
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["selection"]; sys.exit(0 if s["limit"] == "n[1-4]" and s["nodes"] == 4 and s["digest"].startswith("sha256:") else 1)' "$S/l1.json"
refuse "shards of different --limit selections" "different selections of nodes" "$S/l1.json" "$S/l2.json"
check "the selections are named with their files" grep -qF -- "--limit 'n[1-6]' (6 node(s)): '$S/l2.json'" "$S/r.err"
set +e
"$PLUMB" facts merge "$S/l1.json" "$S/l3.json" >"$S/sel.json" 2>/dev/null
rc=$?
set -e
check "the shards of one selection merge (exit $rc), the merge naming it" \
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if sys.argv[2] == "0" and sorted(j["nodes"]) == ["n1", "n2", "n3", "n4"] and j["selection"]["limit"] == "n[1-4]" else 1)' "$S/sel.json" "$rc"

# --shard's own errors, and --shard within --limit.
gather --shard 0/4
check "--shard 0/4 is refused (exit 1) with the 1-based hint" bash -c "test $RC = 1 && grep -q 'shards count from 1' '$ERR'"
gather --limit n1,n2,n3 --shard 4/4 --format json
check "--shard splits what --limit selected: n1,n2,n3 in shard 4/4 is n2 alone" py 'sorted(j["nodes"]) == ["n2"]'
gt_finish
