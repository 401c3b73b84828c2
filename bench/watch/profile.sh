#!/usr/bin/env bash
# bench/watch/profile.sh: where a steady `plumb watch` round's client CPU goes. One testbed of N
# nodes, `plumb watch --spread 0`, and once its first round (the handshakes) is done,
# `perf record -g` on the watch for R intervals (or, with PERF=0, its CPU every half second).
#
#   N=64 INTERVAL=20 R=3 bench/watch/profile.sh     # then: perf report -i $WORK/perf.data
#
# Prints the CPU per node per steady round and the busiest threads; keeps $WORK (printed) with
# perf.data, the watch's log and events. Needs root (the testbed) and perf. Not a test.
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PLUMB=${PLUMB:-$SRC/build/plumb}
TB=${PLUMB_TB:-$SRC/tests/testbed/tb}
N=${N:-64} INTERVAL=${INTERVAL:-20} R=${R:-3} PERF=${PERF:-1}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/plumb-watch-profile.XXXXXX")
export TB_RUN=$WORK/$(basename "$WORK")
WATCH_PID=
cleanup() {
  [[ -z $WATCH_PID ]] || { kill "$WATCH_PID" 2>/dev/null || true; wait "$WATCH_PID" 2>/dev/null || true; }
  "$TB" down >/dev/null 2>&1 || true
}
trap cleanup EXIT
"$TB" up "$N" >/dev/null
cp "$SRC/tests/integration/data/plan/baseline.yaml" "$WORK/h100.yaml"
"$TB" cluster-repo "$WORK/repo" --stack "$WORK/h100.yaml" \
  --rollout "$SRC/tests/integration/data/plan/rolling.yaml" >/dev/null
. "$TB_RUN/env.sh"
nsenter --net="/run/netns/$TB_NETNS" "$PLUMB" watch --repo "$WORK/repo" --events "$WORK/events.jsonl" \
  --fanout 64 --interval "${INTERVAL}s" --spread 0 2>"$WORK/watch.err" &
WATCH_PID=$!
until grep -q 'round 1:' "$WORK/watch.err"; do
  kill -0 "$WATCH_PID" || { cat "$WORK/watch.err" >&2; exit 1; }
  sleep 1
done
tck=$(getconf CLK_TCK)
cpu() { awk -v t="$tck" '{print ($14 + $15) / t}' "/proc/$WATCH_PID/stat"; }   # user+sys s
c1=$(cpu)
if ((PERF)); then
  perf record -F 997 -g -p "$WATCH_PID" -o "$WORK/perf.data" -- sleep $((INTERVAL * R)) \
    >/dev/null 2>"$WORK/perf.err"
else
  end=$((SECONDS + INTERVAL * R))
  while ((SECONDS < end)); do
    echo "$(date +%s.%N) $(cpu) $(grep -c 'round [0-9]*:' "$WORK/watch.err")" >>"$WORK/samples"
    sleep 0.5
  done
fi
c2=$(cpu)
echo "work dir: $WORK (uptime: $(uptime))"
python3 -c "print(f'watch CPU over {$R} intervals: {($c2-$c1)*1000:.0f} ms; per node per round: {($c2-$c1)*1000/($R*$N):.3f} ms')"
tail -n "$((R + 1))" "$WORK/watch.err"
echo "busiest threads (tid, CPU s since start):"
for t in "/proc/$WATCH_PID/task/"*; do awk -v t="$tck" '{print $1, ($14 + $15) / t}' "$t/stat"; done |
  sort -k2 -nr | head -5
