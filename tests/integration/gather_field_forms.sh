#!/usr/bin/env bash
# Field forms of real node tools that gather must read (issue 12), each on a testbed node made
# to print it, and one rule for a module that fails on a node, checked in gather, drift and plan:
#   n1  ibstat indented with spaces (ib_indent=8)
#   n2  ibstat stops at a CA it cannot stat (ib_stat_fail=3): ibpanic before the buffered stdout;
#       the CAs read are kept, the unread one is named, and the read is partial (exit 3)
#   n3  the R610 driver branch (610.43.02: KMD Version / CUDA UMD Version, DRIVER version deprecated)
#   n4  no nvidia kernel module for the kernel: modprobe's FATAL line before nvidia-smi's error
#   n5  an nvidia-smi that prints garbage: a part of nvidia_driver fails, its other facts stay,
#       gather says so on the node and exits 3, drift and plan call the node unreadable
. "$(dirname "$0")/lib/gather.sh"
export TB_DOWNTIME=1
gt_up 5
st() { "$TB" state "$@" >/dev/null; }
st n1 ib_indent=8
st n2 ib_stat_fail=3
st n3 driver=610.43.02 fabricmanager=610.43.02
st n4 -driver
st n4 smi_modprobe_fatal=1
# /proc/driver/nvidia is laid down at boot from the state.
"$TB" ctl reboot n3
"$TB" ctl reboot n4
sleep 0.5
"$TB" ctl wait-up n3 >/dev/null
"$TB" ctl wait-up n4 >/dev/null
# n5: an nvidia-smi first in PATH that prints a row of the default table whatever it is asked.
"$TB" ssh n5 "printf '#!/bin/sh\necho \"|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |\"\n' >/usr/local/bin/nvidia-smi && chmod +x /usr/local/bin/nvidia-smi"
check "n3's nvidia-smi prints the R610 table" bash -c "'$TB' ssh n3 nvidia-smi | grep -q 'KMD Version: 610.43.02 .*CUDA UMD Version: 13.3'"
check "n3's nvidia-smi --version says DRIVER version is deprecated" bash -c "'$TB' ssh n3 nvidia-smi --version | grep -q '^DRIVER version *: Deprecated'"

gather --format json --facts-out "$GT_TMP/facts.json"
check "a module error on a node makes gather partial (exit 3)" test "$RC" = 3
check "... every node was reached" py 'j["summary"]["read"] == 5 and j["summary"]["unreadable"] == 0'
check "... the summary counts the two nodes with a module error (n2's unread CA, n5's nvidia-smi)" py 'j["summary"]["module_errors"] == 2'
# facts MODULE NODE EXPR: py EXPR with f = that module's facts on that node.
facts() { py "(lambda f: $3)(j['nodes']['$2']['facts']['$1'])"; }
check "n1: ibstat indented with spaces gives all 8 ports" facts infiniband n1 \
  "len(f['ports']) == 8 and all(p['state'] == 'Active' and p['rate_gbps'] == 400 and p['link_layer'] == 'InfiniBand' for p in f['ports'])"
check "n1: ... and no module error" py '"errors" not in j["nodes"]["n1"] and "part_errors" not in j["nodes"]["n1"]["facts"]["infiniband"]'
check "n2: the CAs before the failed one are kept" facts infiniband n2 "[p['ca'] for p in f['ports']] == ['mlx5_0', 'mlx5_1', 'mlx5_2']"
check "n2: the CA ibstat could not read is named" facts infiniband n2 \
  "f['unread_cas'] == ['mlx5_3'] and any('ibpanic' in w and 'mlx5_3' in w for w in f['warnings'])"
check "n2: ... as a part error of the read, naming the CA" facts infiniband n2 \
  "f['part_errors'][0]['part'] == 'ibstat' and 'could not read CA mlx5_3' in f['part_errors'][0]['message']"
check "n3 (R610): /proc, modinfo, the CSV query and the fabric manager all read 610.43.02" facts nvidia_driver n3 \
  "(f['loaded_version'], f['installed_version'], f['nvml'], f['fabricmanager']['version']) == ('610.43.02',) * 2 + ('ok', '610.43.02') and len(f['gpus']) == 8 and all(g['driver_version'] == '610.43.02' for g in f['gpus'])"
check "n4: modprobe's line before nvidia-smi's error is still 'no driver', the line kept as a note" facts nvidia_driver n4 \
  "f['nvml'] == 'no-driver' and f['smi_notes'][0].startswith('modprobe: FATAL: Module nvidia not found in directory /lib/modules/') and 'part_errors' not in f"
check "n5: nvidia-smi's part failed, located" facts nvidia_driver n5 \
  "f['part_errors'][0]['part'] == 'smi' and 'nvidia-smi: expected 5 CSV fields in line 1' in f['part_errors'][0]['message']"
check "n5: ... and the driver facts of /proc, modinfo and the fabric manager stay" facts nvidia_driver n5 \
  "(f['loaded_version'], f['installed_version'], f['fabricmanager']['version'], f['nvml']) == ('535.161.08', '535.161.08', '535.161.08', None)"
[[ $RC == 3 ]] || head -c 3000 "$ERR"

gather
check "text: exit 3 too" test "$RC" = 3
# nvidia-smi failing costs two modules their smi part: nvidia_driver's and gpu_health's.
check "text: n5's line counts its module errors" grep -qE '^n5  [0-9.]+s  \(2 module errors\)$' "$OUT"
sed -n '/^n5 /,/^$/p' "$OUT" | grep -A1 '^  nvidia_driver ' >"$GT_TMP/n5-nvidia" || true
check "text: under n5, nvidia_driver shows the facts it read, then the error" bash -c \
  "sed -n 1p '$GT_TMP/n5-nvidia' | grep -q 'installed_version=535.161.08' && sed -n 2p '$GT_TMP/n5-nvidia' | grep -q '^ *ERROR probe.nvidia_driver: nvidia-smi: expected 5 CSV fields in line 1'"
check "text: the closing line names the nodes with module errors" grep -qE 'gathered 5 nodes in [0-9.]+s: 5 read \(2 with module errors\), 0 unreadable$' "$OUT"
check "text: under n2, infiniband's error names the unread CA" grep -q 'ERROR probe.infiniband: ibstat: could not read CA mlx5_3' "$OUT"
[[ $RC == 3 ]] || head -c 3000 "$OUT"

# drift and plan read the snapshot: the same rule, no SSH.
cp "$PLUMB_SRC/tests/integration/data/plan/baseline.yaml" "$GT_TMP/stack.yaml"
echo 'fabric: { infiniband: { state: ACTIVE, rate_gbps: 400 } }' >>"$GT_TMP/stack.yaml"
mkdir -p "$REPO/stacks" "$REPO/rollouts"
cp "$GT_TMP/stack.yaml" "$REPO/stacks/h100.yaml"
cp "$PLUMB_SRC/tests/integration/data/plan/rolling.yaml" "$REPO/rollouts/rolling.yaml"
sed -i 's|^  gpu: {}$|  gpu: { stack: h100, rollout: rolling }|' "$REPO/inventory.yaml"
git -C "$REPO" add -A
gt_commit "pin the baseline and the fabric"
run_plumb() { # ARGS...: stdout $OUT, stderr $ERR, rc $RC (no node is contacted: --facts)
  set +e
  "$PLUMB" "$@" --repo "$REPO" --facts "$GT_TMP/facts.json" >"$GT_TMP/out" 2>"$GT_TMP/err"
  RC=$?
  set -e
  OUT=$GT_TMP/out ERR=$GT_TMP/err
}
run_plumb drift --no-bmc --format json
check "drift: exit 2 (n3, n4 drifted)" test "$RC" = 2
check "drift: n5 is unreadable, for its nvidia-smi" py '"nvidia-smi: expected 5 CSV fields" in [n for n in j["nodes"] if n["node"] == "n5"][0]["unreadable_reason"]'
check "drift: n2 (pins the fabric) is unreadable, naming the CA ibstat could not read, never in sync" py '[n["node"] for n in j["nodes"] if not n["readable"]] == ["n2", "n5"] and "could not read CA mlx5_3" in [n for n in j["nodes"] if n["node"] == "n2"][0]["unreadable_reason"]'
check "drift: n1 (spaces) is in sync on the fabric" py 'all(c["status"] == "in_sync" for n in j["nodes"] if n["node"] == "n1" for c in n["checks"] if c["key"].startswith("fabric."))'
check "drift: n4 (no driver) drifts on nvidia.driver" py 'any(c["key"] == "nvidia.driver" and c["status"] == "drift" for n in j["nodes"] if n["node"] == "n4" for c in n["checks"])'
run_plumb plan --no-scheduler --detailed-exitcode
check "plan: exit 2 (changes), n5 listed as unreadable" bash -c "[[ $RC == 2 ]] && grep -q 'n5' '$OUT' && grep -qi 'unreadable' '$OUT' && grep -q 'nvidia-smi: expected 5 CSV fields' '$OUT'"
gt_finish
