#!/bin/bash
# Redfish inventory benchmark: firmware + BIOS + power of N emulated BMCs (OpenBMC mode: no
# $expand, so both tools walk the same links), plumb vs `xargs -P64 redfishtool` doing the same
# reads. One run each, side by side, against the same emulator process.
#
#   bench/redfish/run.sh [N=256] [FANOUT=64]        (PLUMB=path/to/plumb, default build/plumb)
#   PLUMB_ONLY=1 bench/redfish/run.sh 1024          time plumb alone (redfishtool is slow)
#
# Prints the wall times and the ratio, and checks that both read every BMC.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
N=${1:-256}
P=${2:-64}
PLUMB=${PLUMB:-$src/build/plumb}
"$src/tests/testbed/redfish/bmc" mockups >/dev/null || exit 1
command -v redfishtool >/dev/null || { echo "redfishtool not installed (apt-get install redfishtool)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/plumb-rfbench.XXXXXX")
run=$work/run
trap '"$src/tests/testbed/redfish/bmc" down --run "$run" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
base=$((30000 + (RANDOM % 200) * 10))
"$src/tests/testbed/redfish/bmc" up --run "$run" --count "$N" --vendor openbmc --ports "$base" \
  --option session_limit=1000 2>/dev/null
echo "emulator: $N OpenBMC BMCs on 127.0.0.1:$base.. (one process), fan-out $P"
now() { date +%s.%N; }

t0=$(now)
"$PLUMB" bmc inventory --targets "$run/bmcs.txt" --ca "$run/certs/ca.pem" \
  --credentials "file:$run/credentials" --fanout "$P" --format json --out "$work/plumb.json" >/dev/null
t1=$(now)
plumb_s=$(echo "$t1 - $t0" | bc)
read_ok=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sum(1 for n in d['nodes'] if n['reachable'] and not n['errors']))" "$work/plumb.json")
echo "plumb bmc inventory:          ${plumb_s}s  ($read_ok/$N BMCs fully read)"

[ -n "${PLUMB_ONLY:-}" ] && exit 0
t0=$(now)
awk '{sub("https://", "", $2); print $2}' "$run/bmcs.txt" |
  RF_CRED_FILE=$run/credentials xargs -P "$P" -n 1 bash "$src/bench/redfish/rf_one.sh" >"$work/rft.out" 2>"$work/rft.err" || true
t1=$(now)
rft_s=$(echo "$t1 - $t0" | bc)
rft_ok=$(grep -c 'firmware=[1-9]' "$work/rft.out" || true)
echo "xargs -P$P redfishtool:        ${rft_s}s  ($rft_ok/$N BMCs fully read)"
echo "ratio plumb/redfishtool:      $(echo "scale=3; $plumb_s / $rft_s" | bc)"
reqs=$(wc -l <"$run/requests.log")
echo "requests served by the emulator (both tools): $reqs"
