#!/usr/bin/env bash
# plumb validate on the examples (made into git repos with history) and on broken copies:
# exit codes, the summary line, refs (branch, tag, short SHA, unknown), --format json, and the
# working-tree warning.
set -uo pipefail
: "${PLUMB:?path to the plumb binary}" "${PLUMB_SRC:?source root}"
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
pod=$E2E_TMP/pod
make_cluster_repo "$PLUMB_SRC/examples/h100-pod" "$pod"
make_cluster_repo "$PLUMB_SRC/examples/minimal" "$E2E_TMP/mini"

echo "# valid examples"
expect_rc 0 "h100-pod at HEAD is valid" -- "$PLUMB" validate --repo "$pod"
expect_grep "^valid: cluster pod-a, 32 nodes, 3 groups, 2 stacks, 1 rollout, 2 waivers at [0-9a-f]{12} \(ref HEAD\)$" \
  "$E2E_OUT" "summary line names counts, commit and ref"
expect_rc 0 "minimal is valid" -- "$PLUMB" validate --repo "$E2E_TMP/mini"
expect_grep "^valid: cluster mini, 4 nodes" "$E2E_OUT" "minimal summary"

echo "# refs"
base=$(git -C "$pod" rev-parse baseline)
expect_rc 0 "tag baseline" -- "$PLUMB" validate --repo "$pod" --ref baseline
expect_grep "at ${base:0:12} \(ref baseline\)" "$E2E_OUT" "tag resolves to the baseline commit"
expect_rc 0 "short SHA" -- "$PLUMB" validate --repo "$pod" --ref "${base:0:7}"
expect_grep "at ${base:0:12} " "$E2E_OUT" "short SHA resolves to the same commit"
expect_rc 0 "branch main" -- "$PLUMB" validate --repo "$pod" --ref main
expect_grep "at $(git -C "$pod" rev-parse --short=12 main) " "$E2E_OUT" "branch resolves to its tip"
expect_rc 1 "unknown ref" -- "$PLUMB" validate --repo "$pod" --ref upgrad
expect_grep "error: unknown ref 'upgrad'" "$E2E_ERR" "unknown ref is named"
expect_grep "did you mean 'upgrade'\?" "$E2E_ERR" "unknown ref hints the nearest ref"
expect_rc 1 "not a repo" -- "$PLUMB" validate --repo "$PLUMB_SRC/examples/minimal"
expect_grep "is not a git repository" "$E2E_ERR" "not-a-repo says so"

echo "# the ref is read from git, not from the disk"
sed -i "s/driver: 560.35.03/driver: 560.35.03-beta/" "$pod/stacks/h100-train-2025q4.yaml"   # uncommitted
expect_rc 0 "committed HEAD still valid with a broken working tree" -- "$PLUMB" validate --repo "$pod"
expect_rc 1 "working tree sees the uncommitted edit" -- "$PLUMB" validate --repo "$pod" --working-tree
expect_grep "warning: working-tree mode" "$E2E_ERR" "working-tree mode warns"
expect_grep "stacks/h100-train-2025q4.yaml:[0-9]+:[0-9]+: error: invalid value \"560.35.03-beta\" \[key: nvidia.driver\]" \
  "$E2E_ERR" "located error for the uncommitted edit"
git -C "$pod" checkout -q -- .
expect_rc 0 "working tree of a clean repo" -- "$PLUMB" validate --repo "$pod" --working-tree
expect_grep "warning: working-tree mode" "$E2E_ERR" "the warning is there even when valid"
expect_grep "in the working tree of .* \(HEAD [0-9a-f]{12}\)" "$E2E_OUT" "summary says working tree"

echo "# --format json"
expect_rc 0 "json valid" -- "$PLUMB" validate --repo "$pod" --format json
python3 - "$E2E_OUT" "$(git -C "$pod" rev-parse HEAD)" <<'PY' && pass "json fields" || fail "json fields"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["valid"] is True and d["commit"] == sys.argv[2], d
assert d["counts"] == {"nodes": 32, "groups": 3, "stacks": 2, "rollouts": 1, "waivers": 2}, d["counts"]
assert d["errors"] == 0 and d["diagnostics"] == []
PY

echo "# broken copies"
broken=$E2E_TMP/broken
cp -r "$PLUMB_SRC/examples/h100-pod" "$broken"
sed -i 's/^  driver: 550.90.07/  drivr: 550.90.07/' "$broken/stacks/h100-train-2025q4.yaml"
sed -i 's/cuda: 12.2.2/cuda: 12.6.2/' "$broken/stacks/h100-infer-2025q3.yaml"
sed -i 's/groups: \[h100-infer\], labels: { sku: h100-sxm } }/groups: [h100-infr] }/' "$broken/inventory.yaml"
git -C "$broken" init -q -b main && git -C "$broken" add -A && git -C "$broken" commit -qm broken
expect_rc 1 "broken copy is invalid" -- "$PLUMB" validate --repo "$broken"
expect_grep "^stacks/h100-train-2025q4.yaml:4:3: error: unknown key 'drivr' \[key: nvidia.drivr\]$" "$E2E_ERR" "unknown key located"
expect_grep "^  hint: did you mean 'driver'\?$" "$E2E_ERR" "did-you-mean hint"
expect_grep "unknown group 'h100-infr' \[key: nodes\[24\].groups\[0\]\]" "$E2E_ERR" "unknown group located"
expect_grep "^invalid: [0-9]+ errors" "$E2E_ERR" "error count summary"
expect_rc 1 "broken copy, json" -- "$PLUMB" validate --repo "$broken" --format json
python3 - "$E2E_OUT" <<'PY' && pass "json diagnostics carry file/line/column/key/hint" || fail "json diagnostics"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["valid"] is False and d["errors"] >= 2
e = [x for x in d["diagnostics"] if x["code"] == "schema.unknown-key"][0]
assert e["file"] == "stacks/h100-train-2025q4.yaml" and e["line"] == 4 and e["column"] == 3, e
assert e["key"] == "nvidia.drivr" and "driver" in e["hint"], e
PY

echo "# coherence: CUDA 12.6 on the R535 driver"
coh=$E2E_TMP/coh
cp -r "$PLUMB_SRC/examples/h100-pod" "$coh"
sed -i 's/cuda: 12.2.2/cuda: 12.6.2/; s/nccl: 2.19.3-1+cuda12.2/nccl: 2.23.4-1+cuda12.6/' "$coh/stacks/h100-infer-2025q3.yaml"
expect_rc 1 "incoherent pins are invalid" -- "$PLUMB" validate --repo "$coh" --working-tree
expect_grep "stacks/h100-infer-2025q3.yaml:5:9: error: nvidia.cuda 12.6.2 needs nvidia.driver >= 560.35.03 \(CUDA 12.6 Update 2\), but nvidia.driver is 535.183.01 \(set at stacks/h100-infer-2025q3.yaml:4:11\) \[rule: cuda-driver\]" \
  "$E2E_ERR" "cuda-driver names both pins, both locations, the rule"
expect_grep "affects: gpu025, gpu026, gpu027, gpu028, ... \(8 nodes\)" "$E2E_ERR" "one report per stack, with the nodes"

echo "# the binary carries its schemas (no source tree needed), identical to schemas/"
expect_rc 0 "plumb schemas --out" -- "$PLUMB" schemas --out "$E2E_TMP/schemas"
same=1
for f in "$PLUMB_SRC"/schemas/*.schema.json "$PLUMB_SRC"/schemas/rules/compat.yaml; do
  cmp -s "$f" "$E2E_TMP/schemas/${f#"$PLUMB_SRC"/schemas/}" || { same=0; echo "    differs: $f"; }
done
((same)) && pass "written schemas equal the source files" || fail "written schemas differ"
expect_rc 0 "print one" -- "$PLUMB" schemas --print stack.schema.json
expect_grep '"\$schema": "http://json-schema.org/draft-07/schema#"' "$E2E_OUT" "draft-07 schema printed"

echo "# bad input never crashes"
for f in inventory.yaml stacks/h100-train-2025q4.yaml rollouts/slurm-rolling.yaml waivers.yaml; do
  for junk in $'\x00\x01\x02' '{{{{' '- - - [' $'key: "unterminated\n' '&a [*a]' ''; do
    j=$E2E_TMP/junk
    rm -rf "$j"; cp -r "$PLUMB_SRC/examples/minimal" "$j"; mkdir -p "$j/stacks" "$j/rollouts"
    printf '%s' "$junk" > "$j/$f"
    "$PLUMB" validate --repo "$j" --working-tree >"$E2E_OUT" 2>"$E2E_ERR"; rc=$?
    if [[ $rc -ne 0 && $rc -ne 1 ]] || grep -q "terminate called\|Segmentation" "$E2E_ERR"; then
      fail "junk in $f: exit $rc"; head -5 "$E2E_ERR"
    fi
  done
done
pass "junk files give exit 0/1, never a crash"
finish
