#!/usr/bin/env bash
# plumb show NODE: merged desired state with the origin of every value, at different refs.
set -uo pipefail
: "${PLUMB:?path to the plumb binary}" "${PLUMB_SRC:?source root}"
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
pod=$E2E_TMP/pod
make_cluster_repo "$PLUMB_SRC/examples/h100-pod" "$pod"

echo "# text"
expect_rc 0 "show a training node at the baseline tag" -- "$PLUMB" show gpu001 --repo "$pod" --ref baseline
expect_grep "^node gpu001 \(gpu001.pod-a.example\) in cluster pod-a at [0-9a-f]{12} \(ref baseline\)$" "$E2E_OUT" "header"
expect_grep "stack +h100-train-2025q4 +\(from group h100-train, stacks/h100-train-2025q4.yaml\)" "$E2E_OUT" "stack and where it came from"
expect_grep "rollout +slurm-rolling +\(from group gpu, rollouts/slurm-rolling.yaml\)" "$E2E_OUT" "rollout inherited from the parent group"
expect_grep "merge order gpu -> h100-train" "$E2E_OUT" "merge order, parents first"
expect_grep "^  nvidia.driver +550.90.07 +stacks/h100-train-2025q4.yaml:4:11 +\(stack h100-train-2025q4\)$" "$E2E_OUT" "driver with origin at baseline"
expect_grep "^  sysctl.vm.swappiness +10 +inventory.yaml:[0-9]+:[0-9]+ +\(group gpu\)$" "$E2E_OUT" "override from the parent group"

expect_rc 0 "same node at the upgrade tag" -- "$PLUMB" show gpu001 --repo "$pod" --ref upgrade
expect_grep "^  nvidia.driver +560.35.03 " "$E2E_OUT" "upgrade commit changes the driver"
expect_grep "^  nvidia.cuda +12.6.2 " "$E2E_OUT" "and CUDA"

expect_rc 0 "an inference node" -- "$PLUMB" show gpu030 --repo "$pod"
expect_grep "^  sysctl.vm.swappiness +1 +inventory.yaml:[0-9]+:[0-9]+ +\(group h100-infer\)$" "$E2E_OUT" "child group beats parent"
expect_grep "^  sysctl.net.core.netdev_max_backlog +250000 +inventory.yaml" "$E2E_OUT" "parent's other keys still merge"
expect_grep "^  nvidia.driver +535.183.01 " "$E2E_OUT" "inference stack is untouched by the upgrade"

if [[ -w /dev/full ]]; then   # output that cannot be written is an error, not a success
  expect_rc 1 "show to a full stdout (/dev/full): 1" -- bash -c "'$PLUMB' show gpu030 --repo '$pod' >/dev/full"
  expect_grep "cannot write the output" "$E2E_ERR" "the error names the output"
fi

echo "# json"
expect_rc 0 "json" -- "$PLUMB" show gpu030 --repo "$pod" --format json
python3 - "$E2E_OUT" <<'PY' && pass "json: desired, origins with layers" || fail "json fields"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["node"] == "gpu030" and d["stack"]["name"] == "h100-infer-2025q3", d["stack"]
assert d["desired"]["sysctl"]["vm.swappiness"] == 1
o = d["origins"]["/sysctl/vm.swappiness"]
assert o["file"] == "inventory.yaml" and o["layer"] == "group h100-infer" and o["line"] > 0, o
assert d["origins"]["/nvidia/driver"]["file"] == "stacks/h100-infer-2025q3.yaml"
# every leaf of desired has an origin
def leaves(v, p=""):
    if isinstance(v, dict) and v:
        for k, x in v.items():
            yield from leaves(x, p + "/" + k.replace("~", "~0").replace("/", "~1"))
    else:
        yield p
missing = [p for p in leaves(d["desired"]) if p not in d["origins"]]
assert not missing, missing
PY

echo "# errors"
expect_rc 1 "unknown node" -- "$PLUMB" show gpu3 --repo "$pod"
expect_grep "no node 'gpu3' in cluster pod-a" "$E2E_ERR" "unknown node is named"
expect_rc 1 "no node argument" -- "$PLUMB" show --repo "$pod"
finish
