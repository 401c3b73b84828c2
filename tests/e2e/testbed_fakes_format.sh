#!/usr/bin/env bash
# The testbed's fake tools print what the real tools print: each check holds
# a fake's output against a real sample in tests/data/samples/ (layout, column
# positions, messages, exit codes). Runs the fakes directly on a scratch node
# state; no testbed, no root needed.
# shellcheck disable=SC2016  # ${Package} & co are dpkg-query's, not ours
set -uo pipefail
src=${PLUMB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
fake=$src/tests/testbed/fake/usr
samples=$src/tests/data/samples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TBNODE=$tmp/node
mkdir -p "$TBNODE/state"
cp "$src"/tests/testbed/defaults/* "$TBNODE/state/"
echo hostname=n1 >>"$TBNODE/state/current.conf"
: >"$TBNODE/state/pending.conf"
: >"$TBNODE/state/events.log"
while IFS= read -r l; do echo "$l"; done <"$TBNODE/state/sysctl.defaults" >"$TBNODE/state/sysctl.conf"

pass=0 fail=0
check() {
  local d=$1
  shift
  if "$@"; then pass=$((pass + 1)); echo "PASS: $d"; else fail=$((fail + 1)); echo "FAIL: $d"; fi
}
eq() {
  [[ $1 == "$2" ]] && return 0
  printf '    got:  %q\n    want: %q\n' "$1" "$2"
  return 1
}
# positions of the box characters | and + in a line
bars() { local s=$1 i out=""; for ((i = 0; i < ${#s}; i++)); do [[ ${s:i:1} == [\|+] ]] && out+="$i "; done; echo "$out"; }
# a key: value listing reduced to its keys (indentation and tabs kept)
keys() { sed -E 's/^([[:space:]]*[^:]*:).*/\1/'; }

# nvidia-smi: the 535+ table
t=$("$fake/bin/nvidia-smi")
s=$(cat "$samples/nvidia-smi/table-575.txt")
check "nvidia-smi table: header rows identical to the real one" \
  eq "$(sed -n '4,7p' <<<"$t")" "$(sed -n '2,5p' <<<"$s")"
check "nvidia-smi table: version row has the real column positions" \
  eq "$(sed -n 3p <<<"$t" | grep -b -o -E 'NVIDIA-SMI|Driver Version|CUDA Version|\|$' | cut -d: -f1 | xargs)" \
  "$(sed -n 1p <<<"$s" | grep -b -o -E 'NVIDIA-SMI|Driver Version|CUDA Version|\|$' | cut -d: -f1 | xargs)"
for r in 1 2 3; do
  check "nvidia-smi table: GPU row $r has the real column separators" \
    eq "$(bars "$(sed -n "$((7 + r))p" <<<"$t")")" "$(bars "$(sed -n "$((6 + r))p" <<<"$s")")"
done
check "nvidia-smi table: process box like the real one" \
  eq "$(grep -A3 '^| Processes:' <<<"$t" | head -1)" "$(grep '^| Processes:' <<<"$s")"
# nvidia-smi -q: every key the real (510) log shows is there, with its indentation,
# and the value column is where the real one is
q=$("$fake/bin/nvidia-smi" -q -i 0)
missing=$(keys <"$samples/nvidia-smi/q-510-excerpt.txt" | grep ':' | grep -v -E 'Timestamp|^GPU ' | sed -E 's/ +:$//' | while IFS= read -r k; do grep -qF -- "$k" <<<"$q" || echo "[$k]"; done)
check "nvidia-smi -q: the real log's keys, indented alike" eq "$missing" ""
check "nvidia-smi -q: values start in the real column (44)" \
  eq "$(grep ' : ' <<<"$q" | awk '{print index($0, " : ")}' | sort -u)" "$(grep ' : ' "$samples/nvidia-smi/q-510-excerpt.txt" | awk '{print index($0, " : ")}' | sort -u)"
check "nvidia-smi: unknown field exits 2, missing GPU exits 6 (man page)" \
  eq "$("$fake/bin/nvidia-smi" --query-gpu=bogus --format=csv >/dev/null; echo $?)/$("$fake/bin/nvidia-smi" -L -i 99 >/dev/null; echo $?)" "2/6"
sed -i '/^driver=/d' "$TBNODE/state/current.conf"
check "nvidia-smi without a driver exits 9 (man page)" eq "$("$fake/bin/nvidia-smi" >/dev/null; echo $?)" 9
echo driver=535.161.08 >>"$TBNODE/state/current.conf"

# ibstat / ibv_devinfo: line structure (keys, tabs) of the real output
check "ibstat: a CA block has the real keys and tabs" \
  eq "$("$fake/sbin/ibstat" mlx5_7 | keys)" "$(sed -n '1,17p' "$samples/ibstat/infiniband-and-ibpanic.txt" | keys)"
check "ibstat: a missing CA fails with ibpanic like the real one" \
  eq "$("$fake/sbin/ibstat" mlx5_8 2>&1 | sed 's/\[[0-9]*\]/[PID]/')" "$(sed -n '18p' "$samples/ibstat/infiniband-and-ibpanic.txt" | sed 's/\[[0-9]*\]/[PID]/')"
check "ibv_devinfo: device header keys and tabs like the real one" \
  eq "$("$fake/bin/ibv_devinfo" -d mlx5_1 | head -10 | keys)" "$(keys <"$samples/ibv_devinfo/cx5-header.txt")"
check "ibv_devinfo: port keys like the real one" \
  eq "$("$fake/bin/ibv_devinfo" -d mlx5_1 | sed -n '11,18p' | keys | tr -s ' \t' ' ')" "$(sed -n '11,18p' "$samples/ibv_devinfo/cx7-port.paste.txt" | keys | tr -s ' \t' ' ')"

# dpkg-query
check "dpkg-query -W: name TAB version" eq "$("$fake/bin/dpkg-query" -W libnccl2)" "$(printf 'libnccl2\t2.19.3-1+cuda12.2')"
check "dpkg-query -l: the real header" \
  eq "$("$fake/bin/dpkg-query" -l libnccl2 | head -3)" "$(head -3 "$samples/dpkg-query/l.debian12.txt")"
check "dpkg-query -l: columns sized to the widest value, like the real one" \
  eq "$("$fake/bin/dpkg-query" -l libnccl2 nvidia-driver-535 | sed -n 4p | grep -b -o -E 'Version|Architecture|Description' | cut -d: -f1 | xargs)" "22 42 55"
check "dpkg-query -W / -s of a missing package: real messages, exit 1" \
  eq "$("$fake/bin/dpkg-query" -W nopkg 2>&1; echo "exit=$?"; "$fake/bin/dpkg-query" -s nopkg 2>&1; echo "exit=$?")" \
  "$(cat "$samples/dpkg-query/W-missing.debian12.txt" "$samples/dpkg-query/s-missing.debian12.txt")"
check "dpkg-query -s: the real first two lines" \
  eq "$("$fake/bin/dpkg-query" -s libnccl2 | sed -n '1,2p' | keys)" "$(sed -n '1,2p' "$samples/dpkg-query/s.debian12.txt" | keys)"

# apt-get
check "apt-get install of an unknown package: real output, exit 100" \
  eq "$("$fake/bin/apt-get" install -y nopkg-xyz 2>&1; echo "exit=$?")" "$(cat "$samples/apt-get/install-unknown.debian12.txt")"
check "apt-get install of an unknown version: real error, exit 100" \
  eq "$("$fake/bin/apt-get" install -y libnccl2=0.0 2>&1 | tail -1)" "E: Version '0.0' for 'libnccl2' was not found"
check "apt-get install of the installed version: real wording" \
  eq "$("$fake/bin/apt-get" install -y libnccl2=2.19.3-1+cuda12.2 | sed -n 4p)" "libnccl2 is already the newest version (2.19.3-1+cuda12.2)."

# sysctl, modinfo, nvcc
check "sysctl: read, -n, tab values and an unknown key like the real one" \
  eq "$("$fake/sbin/sysctl" vm.swappiness; "$fake/sbin/sysctl" -n vm.swappiness; "$fake/sbin/sysctl" net.ipv4.tcp_rmem | sed 's/= .*/=/'; "$fake/sbin/sysctl" no.such.key 2>&1; echo "exit=$?")" \
  "$(sed 's/\(tcp_rmem =\).*/\1/' "$samples/sysctl/read.debian12.txt")"
check "modinfo of a missing module: the real message" \
  eq "$("$fake/sbin/modinfo" -F version nvidia_nonesuch 2>&1 | sed 's/nvidia_nonesuch/nvidia/')" "$(cat "$samples/modinfo/not-found.txt")"
mkdir -p "$tmp/cuda/bin"
cp "$fake/lib/plumb-tb/nvcc" "$tmp/cuda/bin/nvcc"
printf '{\n   "cuda_nvcc" : {\n      "name" : "CUDA NVCC",\n      "version" : "12.5.82"\n   }\n}\n' >"$tmp/cuda/version.json"
check "nvcc --version of 12.5.82 is byte-identical to the real one" \
  eq "$("$tmp/cuda/bin/nvcc" --version)" "$(cat "$samples/nvcc/nvcc-12.5.txt")"

# The parsers' fixtures (tests/data/<module>/, from the in-band modules' work)
# and the fakes must agree: the fakes' output is what the parsers read in the
# integration tests. Checked wherever those fixtures are present.
fx=${PLUMB_FIXTURES:-$src/tests/data}
if [[ -d $fx/nvidia_driver && -d $fx/infiniband ]]; then
  st_set_key() { sed -i "/^$1=/d" "$TBNODE/state/current.conf"; echo "$1=$2" >>"$TBNODE/state/current.conf"; }
  check "fixtures: nvidia-smi CSV header for the probe's query" \
    eq "$("$fake/bin/nvidia-smi" --query-gpu=index,pci.bus_id,name,driver_version,persistence_mode --format=csv | head -1)" "$(head -1 "$fx/nvidia_driver/smi-csv-header.txt")"
  check "fixtures: nvidia-smi CSV rows for the probe's query (8x H100, 550)" \
    eq "$(st_set_key driver 550.90.07; "$fake/bin/nvidia-smi" --query-gpu=index,pci.bus_id,name,driver_version,persistence_mode --format=csv,noheader)" "$(cat "$fx/nvidia_driver/smi-csv-8xh100.txt")"
  check "fixtures: nvidia-smi -q head (keys, indentation, value column) as the parser's" \
    eq "$("$fake/bin/nvidia-smi" -q | sed -n '1,31p' | sed -E 's/: .*/:/; s/^Timestamp.*//')" "$(sed -n '1,31p' "$fx/nvidia_driver/smi-q-2xh100-head.txt" | sed -E 's/: .*/:/; s/^Timestamp.*//')"
  check "fixtures: nvidia-smi without a driver, byte for byte" \
    eq "$(st_set_key driver ''; "$fake/bin/nvidia-smi"; st_set_key driver 550.90.07)" "$(cat "$fx/nvidia_driver/smi-no-driver.txt")"
  check "fixtures: NVML mismatch, byte for byte" \
    eq "$(st_set_key nvml_mismatch_on_pending 1; echo driver=550.90.07 >"$TBNODE/state/pending.conf"; st_set_key driver 535.161.08; "$fake/bin/nvidia-smi"; : >"$TBNODE/state/pending.conf"; st_set_key driver 550.90.07)" \
    "$(cat "$fx/nvidia_driver/smi-nvml-mismatch.txt")"
  check "fixtures: nv-fabricmanager --version" \
    eq "$(st_set_key fabricmanager 550.90.07; "$fake/bin/nv-fabricmanager" --version)" "$(cat "$fx/nvidia_driver/fm-version-550.txt")"
  check "fixtures: systemctl show of the fabric manager (failed)" \
    eq "$(sed -i 's/^nvidia-fabricmanager .*/nvidia-fabricmanager enabled failed/' "$TBNODE/state/services"; "$fake/bin/systemctl" show -p LoadState -p ActiveState -p SubState -p UnitFileState nvidia-fabricmanager.service)" "$(cat "$fx/nvidia_driver/fm-service-failed.txt")"
  check "fixtures: systemctl show of a unit that does not exist" \
    eq "$("$fake/bin/systemctl" show -p LoadState -p ActiveState -p SubState -p UnitFileState nvidia-fabricmanager-nope.service)" "$(cat "$fx/nvidia_driver/fm-service-not-found.txt")"
  check "fixtures: ofed_info -s (MLNX_OFED)" \
    eq "$(st_set_key ofed 23.10-1.1.9.0; "$fake/bin/ofed_info" -s)" "$(cat "$fx/ofed/ofed-info-s-mlnx-23.10.txt")"
  check "fixtures: ofed_info -s (DOCA-OFED)" \
    eq "$(st_set_key ofed 24.07-0.6.1; st_set_key ofed_flavor doca; "$fake/bin/ofed_info" -s; st_set_key ofed_flavor mlnx)" "$(cat "$fx/ofed/ofed-info-s-doca-24.07.txt")"
  check "fixtures: ibstat CA blocks keyed like the parser's" \
    eq "$("$fake/sbin/ibstat" | sed -n '1,34p' | sed -E 's/: .*/:/; s/CA .mlx5_.*/CA/')" "$(sed -n '1,34p' "$fx/infiniband/ibstat-4xcx7-ndr.txt" | sed -E 's/: .*/:/; s/CA .mlx5_.*/CA/')"
  check "fixtures: ibv_devinfo blocks keyed like the parser's" \
    eq "$("$fake/bin/ibv_devinfo" | sed -n '1,38p' | sed -E 's/:(\t+).*/:\1/')" "$(sed -n '1,38p' "$fx/infiniband/ibv-devinfo-4xcx7.txt" | sed -E 's/:(\t+).*/:\1/')"
  check "fixtures: dpkg-query with the probe's format: name TAB version TAB 'ii '" \
    eq "$("$fake/bin/dpkg-query" -W -f='${Package}\t${Version}\t${db:Status-Abbrev}\n' | grep -c -v -P '^[a-z0-9.+-]+\t[^\t]+\tii $')/$(grep -c -v -P '^[a-z0-9.+-]+\t[^\t]+\t[a-z][a-z] $' "$fx/packages/dpkg-query-h100.txt")" "0/0"
  check "fixtures: rpm -qa with the probe's format: 4 tab-separated fields" \
    eq "$("$fake/bin/rpm" -qa --qf '%{NAME}\t%{EPOCH}\t%{VERSION}-%{RELEASE}\t%{ARCH}\n' | awk -F'\t' 'NF != 4' | wc -l)/$(awk -F'\t' 'NF != 4' "$fx/packages/rpm-qa-rhel9.txt" | wc -l)" "0/0"
  check "fixtures: systemctl list-units / list-unit-files columns as the parser reads them" \
    eq "$("$fake/bin/systemctl" list-units --type=service --all --no-legend --no-pager --plain | awk 'NF < 5 || $1 !~ /\.service$/' | wc -l)/$("$fake/bin/systemctl" list-unit-files --type=service --no-legend --no-pager | awk 'NF != 3 || $1 !~ /\.service$/' | wc -l)" "0/0"
  # The forms of issue 12: R610, another tool's stderr before nvidia-smi's error, ibstat
  # indented with spaces, an ibpanic where stdio puts it.
  check "fixtures: nvidia-smi CSV row on R610 (driver_version still answered)" \
    eq "$(st_set_key driver 610.43.02; "$fake/bin/nvidia-smi" --query-gpu=index,pci.bus_id,name,driver_version,persistence_mode --format=csv,noheader -i 0 | cut -d, -f1,4,5)" \
    "$(cut -d, -f1,4,5 "$fx/nvidia_driver/smi-csv-610-h200.txt")"
  check "fixtures: modprobe's FATAL line, then nvidia-smi's no-driver message, as the parser's" \
    eq "$(st_set_key driver ''; st_set_key smi_modprobe_fatal 1; st_set_key kernel 5.15.0-119-generic; "$fake/bin/nvidia-smi" 2>&1; st_set_key smi_modprobe_fatal 0; st_set_key driver 550.90.07)" \
    "$(cat "$fx/nvidia_driver/smi-modprobe-fatal-no-driver.txt")"
  check "fixtures: ibstat with ib_indent=8 is the tab output with tabs expanded, as the parser's" \
    eq "$(st_set_key ib_indent 8; "$fake/sbin/ibstat" | sed -n '1,34p' | sed -E 's/: .*/:/; s/CA .mlx5_.*/CA/'; st_set_key ib_indent '')" \
    "$(sed -n '1,34p' "$fx/infiniband/ibstat-4xcx7-spaces.txt" | sed -E 's/: .*/:/; s/CA .mlx5_.*/CA/')"
  check "fixtures: ibstat into a pipe, a few CAs before the failed one: the ibpanic comes first" \
    eq "$(st_set_key ib_stat_fail 3; "$fake/sbin/ibstat" 2>&1 | sed -n 1p | sed 's/\[[0-9]*\]/[PID]/'; echo "exit=${PIPESTATUS[0]}")" \
    "$(sed -n 1p "$fx/infiniband/ibstat-ibpanic-head.txt" | sed 's/\[[0-9]*\]/[PID]/')"$'\n'"exit=255"
  check "fixtures: ... past 4096 bytes of stdout: inside a line, the rest after it" \
    eq "$(st_set_key ib_count 14; st_set_key ib_stat_fail 12; "$fake/sbin/ibstat" 2>&1 | cat >"$tmp/ibstat-spliced"; grep -c '^CA ' "$tmp/ibstat-spliced"; grep -c '.ibpanic: \[[0-9]*\] main: stat of IB device .mlx5_12. failed' "$tmp/ibstat-spliced"; head -c 4096 "$tmp/ibstat-spliced" | grep -c ibpanic; st_set_key ib_count 8; st_set_key ib_stat_fail '')" \
    "$(printf '12\n1\n0')"
else
  echo "PARTIAL SKIP: the parsers' fixtures (tests/data/<module>/) are not in this tree"
fi

# The health fakes (issue 15) against tests/data/{dcgm,gpu_health,nccl_bw,ib_health}:
# the same layout byte for byte, with the values a node derives (serials, LIDs,
# timestamps, pids) masked.
if [[ -d $fx/dcgm && -d $fx/gpu_health && -d $fx/nccl_bw && -d $fx/ib_health ]]; then
  st_put() { sed -i "/^$1=/d" "$TBNODE/state/current.conf"; [[ -z ${2:-} ]] || echo "$1=$2" >>"$TBNODE/state/current.conf"; }
  serials() { sed -E 's/"[0-9]{13}"/"SERIAL"/'; }
  st_put driver 535.161.08
  check "dcgmi diag -r 1 -j: the DCGM 3 document of the fixture" \
    eq "$("$fake/bin/dcgmi" diag -r 1 -j | serials)" "$(serials <"$fx/dcgm/diag-r1-dcgm3-8xh100-pass.json")"
  check "dcgmi diag -r 3 -j with dcgm_fail=memory:3: the fixture's (its PCIe info lines aside), exit 226" \
    eq "$(st_put dcgm_fail memory:3; "$fake/bin/dcgmi" diag -r 3 -j | serials; echo "exit=${PIPESTATUS[0]}")" \
    "$(grep -v '"info" : ' "$fx/dcgm/diag-r3-dcgm3-memory-fail-gpu3.json" | serials)"$'\n'"exit=226"
  check "dcgmi diag -r 2 -j on DCGM 4: the DCGM 4 document of the fixture" \
    eq "$(st_put dcgm_version 4.2.3; st_put driver 550.90.07; "$fake/bin/dcgmi" diag -r 2 -j | serials; st_put dcgm_version; st_put dcgm_fail; st_put driver 535.161.08)" \
    "$(serials <"$fx/dcgm/diag-r2-dcgm4-memory-fail-gpu3.json")"
  disc() { awk '{ print length($0) }' | sort -u | tr '\n' ' '; }
  mask() { sed -E 's/: .*[^ ] +\|$/: V |/; s/^\| [0-9]+ +\|/| N |/' | sort -u; }
  check "dcgmi discovery -l on DCGM 3.1.8: the real table's borders, cells and widths" \
    eq "$(st_put dcgm_version 3.1.8; "$fake/bin/dcgmi" discovery -l | disc; "$fake/bin/dcgmi" discovery -l | mask; st_put dcgm_version)" \
    "$(disc <"$fx/dcgm/discovery-8xh800-dcgm318.txt"; mask <"$fx/dcgm/discovery-8xh800-dcgm318.txt")"
  # Each version's header and tables (dcgmi/Query.cpp): 3.3 adds the CPU table, 4.1 the
  # ConnectX one, 4.5 lists the active GPUs only, says so, and notes those left out.
  check "dcgmi discovery -l on DCGM 3.3.5 (the testbed's): 'N GPUs found.', then NvSwitches and CPUs" \
    eq "$("$fake/bin/dcgmi" discovery -l | grep -E 'found|^Note')" $'8 GPUs found.\n0 NvSwitches found.\n0 CPUs found.'
  check "dcgmi discovery -l on DCGM 4.2.3: ConnectX too, the header unchanged" \
    eq "$(st_put dcgm_version 4.2.3; "$fake/bin/dcgmi" discovery -l | grep -E 'found|^Note'; st_put dcgm_version)" \
    $'8 GPUs found.\n0 NvSwitches found.\n0 ConnectX found.\n0 CPUs found.'
  check "dcgmi discovery -l on DCGM 4.5.0 with GPU 3 inactive: the fixture's '7 GPUs found (Active).', note and tables" \
    eq "$(st_put dcgm_version 4.5.0; st_put dcgm_inactive 3; "$fake/bin/dcgmi" discovery -l; st_put dcgm_inactive; st_put dcgm_version)" \
    "$(cat "$fx/dcgm/discovery-7of8xh100-dcgm45.txt")"
  check "dcgmi discovery -l on DCGM 4.5.0, every GPU active: '(Active)' and no note; 1 GPU: 'GPU'" \
    eq "$(st_put dcgm_version 4.5.0; "$fake/bin/dcgmi" discovery -l | sed -n 1,2p; st_put gpu_count 1; "$fake/bin/dcgmi" discovery -l | head -1; st_put gpu_count 8; st_put dcgm_version)" \
    $'8 GPUs found (Active).\n+--------+----------------------------------------------------------------------+\n1 GPU found (Active).'
  check "dcgmi discovery -l before 4.5 lists an inactive GPU too" \
    eq "$(st_put dcgm_inactive 3; "$fake/bin/dcgmi" discovery -l | head -1; st_put dcgm_inactive)" "8 GPUs found."
  check "dcgmi discovery -l with the host engine stopped: the real two lines" \
    eq "$(sed -i 's/^nvidia-dcgm .*/nvidia-dcgm enabled inactive/' "$TBNODE/state/services"; "$fake/bin/dcgmi" discovery -l; echo "exit=$?"; sed -i 's/^nvidia-dcgm .*/nvidia-dcgm enabled active/' "$TBNODE/state/services")" \
    "$(cat "$fx/dcgm/hostengine-unreachable.txt")"$'\n'"exit=255"
  q=index,pci.bus_id,ecc.mode.current,ecc.errors.uncorrected.volatile.total,ecc.errors.uncorrected.aggregate.total,retired_pages.pending,remapped_rows.pending,remapped_rows.failure,clocks_throttle_reasons.active
  check "nvidia-smi health query: the 8x H100 fixture byte for byte, and its 535+ header" \
    eq "$("$fake/bin/nvidia-smi" --query-gpu=$q --format=csv | head -1; "$fake/bin/nvidia-smi" --query-gpu=$q --format=csv,noheader)" \
    "$(head -1 "$fx/gpu_health/smi-health-header-535.txt"; cat "$fx/gpu_health/smi-health-8xh100.txt")"
  check "nvidia-smi health query before 535: the header echoes clocks_throttle_reasons; clocks_event_reasons is unknown (exit 2)" \
    eq "$(st_put driver 470.223.02; "$fake/bin/nvidia-smi" --query-gpu=$q --format=csv | head -1; "$fake/bin/nvidia-smi" --query-gpu=clocks_event_reasons.active --format=csv; echo "exit=$?"; st_put driver 535.161.08)" \
    "$(head -1 "$fx/gpu_health/smi-health-header-pre535.txt")"$'\nField "clocks_event_reasons.active" is not a valid field to query.\n\nexit=2'
  check "nvidia-smi health knobs: GPU 3's pending remap and errors as in the failing fixture" \
    eq "$(st_put gpu_ecc_uncorrected_3 2; st_put gpu_remap_pending_3 1; "$fake/bin/nvidia-smi" --query-gpu=$q --format=csv,noheader -i 3; st_put gpu_ecc_uncorrected_3; st_put gpu_remap_pending_3)" \
    "$(sed -n 4p "$fx/gpu_health/smi-health-8xh100-failing.txt")"
  check "dmesg with xid=79:3: the real XID 79 lines, on GPU 3's bus" \
    eq "$(st_put xid 79:3; "$fake/bin/dmesg" | grep -E 'Xid|fallen' | sed -E 's/^\[ *[0-9.]+\]/[T]/'; st_put xid)" \
    "$(grep -E 'Xid|fallen' "$fx/gpu_health/dmesg-xid79-h100.txt" | grep -v 'serial number' | sed -E 's/^\[ *[0-9.]+\]/[T]/')"
  ar=$("$fake/bin/all_reduce_perf" -b 8 -e 8G -f 2 -g 8)
  cols() { awk '$1 ~ /^[0-9]+$/ { print length($0) }' | sort -u; }
  check "all_reduce_perf -b 8 -e 8G -f 2 -g 8: the real header, column widths and summary lines" \
    eq "$(sed -n '1p;12,14p' <<<"$ar" | sed -E 's/iters: [0-9]+ agg/iters: N agg/'; cols <<<"$ar"; grep -c '^ ' <<<"$ar"; grep -E '^# (Out|Avg)' <<<"$ar" | sed -E 's/: [0-9.]+ $/: X /')" \
    "$(sed -n '1p;12,14p' "$fx/nccl_bw/allreduce-8xh100-g8.txt" | sed -E 's/iters: [0-9]+ agg/iters: N agg/'; cols <"$fx/nccl_bw/allreduce-8xh100-g8.txt"; grep -c '^ ' "$fx/nccl_bw/allreduce-8xh100-g8.txt"; grep -E '^# (Out|Avg)' "$fx/nccl_bw/allreduce-8xh100-g8.txt" | sed -E 's/: [0-9.]+ $/: X /')"
  names() { sed -E 's/[0-9]+$/N/; s/Lid [0-9]+/Lid L/; s/CapMask: 0x[0-9A-F]+/CapMask: M/'; }
  check "perfquery and perfquery -x: the real forms (names, dots, order)" \
    eq "$("$fake/sbin/perfquery" -C mlx5_3 -P 1 | names; "$fake/sbin/perfquery" -x -C mlx5_3 -P 1 | names)" \
    "$(names <"$fx/ib_health/perfquery-ndr-clean.txt"; names <"$fx/ib_health/perfquery-x-rhel75.txt")"
else
  echo "PARTIAL SKIP: the health fixtures (tests/data/{dcgm,gpu_health,nccl_bw,ib_health}) are not in this tree"
fi

# R610 (samples/nvidia-smi/*-610*): KMD/CUDA UMD in the table, -q and --version
sed -i '/^driver=/d' "$TBNODE/state/current.conf"
echo driver=610.43.02 >>"$TBNODE/state/current.conf"
t=$("$fake/bin/nvidia-smi")
s=$(cat "$samples/nvidia-smi/table-610.txt")
check "nvidia-smi R610 table: version row and the '+' rule under it, byte for byte" \
  eq "$(sed -n '2,4p' <<<"$t")" "$(sed -n '2,4p' <<<"$s")"
check "nvidia-smi R610 table: process box like the real one" \
  eq "$(grep -A2 '^| Processes:' <<<"$t")" "$(grep -A2 '^| Processes:' <<<"$s")"
check "nvidia-smi R610 --version: the real lines (DRIVER/CUDA version deprecated)" \
  eq "$("$fake/bin/nvidia-smi" --version)" "$(cat "$samples/nvidia-smi/version-610.txt")"
check "nvidia-smi R610 -q: the real head (deprecation notes, KMD/CUDA UMD, 55-wide keys)" \
  eq "$("$fake/bin/nvidia-smi" -q | sed -n '1,9p' | sed 's/^Timestamp .*//')" "$(sed -n '1,9p' "$samples/nvidia-smi/q-610-head.txt" | sed 's/^Timestamp .*//')"

echo "$pass passed, $fail failed"
((fail == 0))
