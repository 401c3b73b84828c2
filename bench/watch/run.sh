#!/usr/bin/env bash
# bench/watch/run.sh: what `plumb watch` costs the controller, next to a fresh `plumb gather` of
# the same testbed nodes in the same run.
#
#   bench/watch/run.sh [--sizes "64 256 1024"] [--interval 60] [--rounds 3] [--fanout 64]
#                      [--watch-fanout 16]
#   bench/watch/run.sh --soak 30 [--soak-nodes 256] [--interval 60]
#
# Per size N: a fresh testbed (tests/testbed/tb up N) and cluster repo, then
#   1. gather: `plumb gather --fanout F --format json` once: wall, client CPU (user+sys), peak RSS;
#   2. watch: `plumb watch --interval I --spread 0 --fanout W` (W: --watch-fanout) running; its first round opens the
#      sessions; then R steady rounds over the open sessions. From /proc/PID: CPU of the steady
#      rounds (per node per round), peak RSS (VmHWM), open fds (max sampled); from /metrics: the
#      wall time of the last round (plumb_watch_round_duration_seconds);
#   3. latency: a hand change (`sysctl -w vm.swappiness=7`) on one node at a random moment of
#      each steady round, and the time until its drift event is in the events file.
# --spread 0 makes a round one burst (all nodes at the interval's start, at most F at once), so
# its wall time is the time to read every node over open sessions; the default spread only
# changes when in the interval each node is read, not what a read costs.
#
# --soak M: one testbed of --soak-nodes nodes, one watch (default spread) for M minutes while n7
# is powered off for 10 s, then left up 10 s after it serves SSH again; RSS and fds sampled every 30 s.
#
# Writes a Markdown table to stdout and to $BENCH_OUT (default bench/watch/last-run.md).
# Needs root (the testbed). Not a test: nothing here fails on a number.
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PLUMB=${PLUMB:-$SRC/build/plumb}
TB=${PLUMB_TB:-$SRC/tests/testbed/tb}
SIZES="64 256 1024" INTERVAL=60 ROUNDS=3 FANOUT=64 WATCH_FANOUT=16 SOAK=0 SOAK_NODES=256
while (($#)); do
  case $1 in
    --sizes) SIZES=$2; shift 2 ;;
    --interval) INTERVAL=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --fanout) FANOUT=$2; shift 2 ;;          # gather's (its default)
    --watch-fanout) WATCH_FANOUT=$2; shift 2 ;;   # the watch's (its default)
    --soak) SOAK=$2; shift 2 ;;
    --soak-nodes) SOAK_NODES=$2; shift 2 ;;
    *) echo "usage: $0 [--sizes \"64 256 1024\"] [--interval S] [--rounds R] [--fanout F] [--watch-fanout F] [--soak MINUTES [--soak-nodes N]]" >&2; exit 2 ;;
  esac
done
BENCH_OUT=${BENCH_OUT:-$SRC/bench/watch/last-run.md}
[[ -x $PLUMB ]] || { echo "bench: build plumb first (make build)" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/plumb-bench-watch.XXXXXX")
export TB_RUN=$WORK/$(basename "$WORK")   # its netns (tb-<run>) is this run's own
WATCH_PID=
cleanup() {
  [[ -z $WATCH_PID ]] || { kill "$WATCH_PID" 2>/dev/null || true; wait "$WATCH_PID" 2>/dev/null || true; }
  "$TB" down >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

tck=$(getconf CLK_TCK)
proc_cpu() { awk -v t="$tck" '{print ($14 + $15) / t}' "/proc/$1/stat"; }   # user+sys seconds
proc_hwm() { awk '/^VmHWM/ {print $2 / 1024}' "/proc/$1/status"; }         # peak RSS, MB
proc_rss() { awk '/^VmRSS/ {print $2 / 1024}' "/proc/$1/status"; }
proc_fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 | wc -l; }
metric() { # NAME: the value of the watch's sample NAME{cluster="testbed"} (empty if none yet)
  { "$TB" exec curl -sf http://127.0.0.1:9472/metrics 2>/dev/null || true; } |   # not up yet: empty
    awk -v n="$1" 'index($0, n "{cluster=\"testbed\"} ") == 1 {print $2}'
}
rounds_done() { grep -c '^plumb watch: round [0-9]*:' "$WORK/watch.err" 2>/dev/null || true; }
wait_rounds() { # N TIMEOUT: until N rounds are done (from the watch's log: a scrape of
  # /metrics every second would cost the watch more CPU than the rounds being measured)
  local start=$SECONDS r
  while :; do
    r=$(rounds_done)
    [[ -n $r ]] && ((r >= $1)) && return 0
    ((SECONDS - start < $2)) || { echo "bench: round $1 not done in $2 s" >&2; return 1; }
    kill -0 "$WATCH_PID" || { echo "bench: plumb watch died" >&2; cat "$WORK/watch.err" >&2; return 1; }
    sleep 1
  done
}
start_watch() { # ARGS...: plumb watch in the testbed's netns, in the background ($WATCH_PID)
  . "$TB_RUN/env.sh"
  : >"$WORK/events.jsonl"
  nsenter --net="/run/netns/$TB_NETNS" "$PLUMB" watch --repo "$WORK/repo" --listen 127.0.0.1:9472 \
    --events "$WORK/events.jsonl" --fanout "$WATCH_FANOUT" "$@" 2>"$WORK/watch.err" &
  WATCH_PID=$!
}
stop_watch() {
  kill -TERM "$WATCH_PID"
  wait "$WATCH_PID" || true
  WATCH_PID=
}
testbed() { # N: a fresh testbed and cluster repo
  "$TB" down >/dev/null 2>&1 || true
  rm -rf "$WORK/repo"
  "$TB" up "$1" >/dev/null
  cp "$SRC/tests/integration/data/plan/baseline.yaml" "$WORK/h100.yaml"
  "$TB" cluster-repo "$WORK/repo" --stack "$WORK/h100.yaml" \
    --rollout "$SRC/tests/integration/data/plan/rolling.yaml" >/dev/null
}

ROWS=()
run_size() {
  local n=$1
  testbed "$n"
  # 1. A fresh gather of the same nodes.
  "$TB" exec /usr/bin/time -f '%e %U %S %M' -o "$WORK/gather.time" \
    "$PLUMB" gather --repo "$WORK/repo" --fanout "$FANOUT" --format json >/dev/null 2>&1 || true
  read -r g_wall g_user g_sys g_rss < <(tail -n 1 "$WORK/gather.time")
  local g_cpu_ms
  g_cpu_ms=$(python3 -c "print(($g_user + $g_sys) * 1000 / $n)")

  # 2. The watch: round 1 opens the sessions, then ROUNDS steady rounds.
  start_watch --interval "${INTERVAL}s" --spread 0
  local budget=$((INTERVAL * 4 + n))
  wait_rounds 1 "$budget"
  local c1 fds_max=0 lat_max=0 lat_sum=0 lat_n=0
  c1=$(proc_cpu "$WATCH_PID")
  for ((r = 2; r <= ROUNDS + 1; r++)); do
    # A hand change at a random moment of this round, on a random node.
    sleep "$(python3 -c "import random; print(round(random.uniform(1, $INTERVAL - 1), 1))")"
    local node="n$((RANDOM % n + 1))" t0 t1 f seen
    seen=$(wc -l <"$WORK/events.jsonl")   # only events after the change count
    t0=$(date +%s.%N)
    "$TB" ssh "$node" sysctl -w vm.swappiness=7 >/dev/null
    until tail -n +"$((seen + 1))" "$WORK/events.jsonl" |
      grep -q "\"event\":\"drift\",\"cluster\":\"testbed\",\"node\":\"$node\""; do sleep 0.2; done
    t1=$(date +%s.%N)
    "$TB" ssh "$node" sysctl -w vm.swappiness=60 >/dev/null   # repaired: the next round clears it
    read -r lat_max lat_sum lat_n < <(python3 -c "l=$t1-$t0; print(max($lat_max, l), $lat_sum + l, $lat_n + 1)")
    f=$(proc_fds "$WATCH_PID")
    ((f > fds_max)) && fds_max=$f
    wait_rounds "$r" "$budget"
  done
  local c2 hwm round_s
  c2=$(proc_cpu "$WATCH_PID")
  hwm=$(proc_hwm "$WATCH_PID")
  round_s=$(metric plumb_watch_round_duration_seconds)
  stop_watch
  local w_cpu_ms ratio lat_avg
  w_cpu_ms=$(python3 -c "print(($c2 - $c1) * 1000 / ($ROUNDS * $n))")
  ratio=$(python3 -c "print(round($w_cpu_ms / $g_cpu_ms * 100, 1))")
  lat_avg=$(python3 -c "print($lat_sum / $lat_n)")
  ROWS+=("$(printf '| %s | %.2f | %.3f | %.0f | %.3f | %.1f%% | %.1f | %.1f | %s | %.1f / %.1f | %s |' \
    "$n" "$g_wall" "$g_cpu_ms" "$(python3 -c "print($g_rss/1024)")" "$w_cpu_ms" "$ratio" \
    "$round_s" "$hwm" "$fds_max" "$lat_avg" "$lat_max" "$((INTERVAL))")")
  echo "bench: $n nodes done: ${ROWS[-1]}" >&2
}

run_soak() {
  local n=$SOAK_NODES minutes=$SOAK
  testbed "$n"
  start_watch --interval "${INTERVAL}s"
  wait_rounds 1 $((INTERVAL * 4 + n))
  local end=$((SECONDS + minutes * 60)) next_sample=$SECONDS flaps=0 booted=0 samples=()
  while ((SECONDS < end)); do
    "$TB" ctl poweroff n7 >/dev/null
    sleep 10
    "$TB" ctl poweron n7 >/dev/null
    flaps=$((flaps + 1))
    # A flap counts as a boot only once n7 serves SSH again: on a machine loaded by the 256
    # nodes a boot can take longer than the 10 s it is left on, and a node that never came up
    # between two power-offs gives the watch nothing new to report (it stays unreadable).
    if TB_WAIT_UP=120 "$TB" ctl wait-up n7 2>/dev/null; then booted=$((booted + 1)); fi
    sleep 10
    if ((SECONDS >= next_sample)); then
      samples+=("$(printf '%d %.1f %d' $(((SECONDS - end) / 60 + minutes)) "$(proc_rss "$WATCH_PID")" "$(proc_fds "$WATCH_PID")")")
      next_sample=$((SECONDS + 30))
    fi
  done
  local hwm rounds ev
  hwm=$(proc_hwm "$WATCH_PID")
  rounds=$(metric plumb_watch_rounds_total)
  ev=$(wc -l <"$WORK/events.jsonl")
  stop_watch
  # What the flapping node's events were, by kind: every read of n7 after a power cycle is a
  # node_rebooted (or node_unreadable while it is off), so their count follows the reads of n7.
  local kinds
  kinds=$(python3 -c '
import collections, json, sys
c = collections.Counter(json.loads(l).get("event", "?") + (" n7" if json.loads(l).get("node") == "n7" else " other")
                        for l in open(sys.argv[1]) if l.strip())
print(", ".join(f"{k}: {v}" for k, v in sorted(c.items())))' "$WORK/events.jsonl")
  cp "$WORK/events.jsonl" "${TMPDIR:-/tmp}/plumb-watch-soak-events.jsonl" && echo "events kept in ${TMPDIR:-/tmp}/plumb-watch-soak-events.jsonl" >&2
  {
    echo "### Soak: $n nodes, $minutes min, n7 powered off for 10 s, then up for 10 s once it serves SSH ($flaps flaps, $booted of them booted to SSH within 120 s), interval ${INTERVAL}s"
    echo
    echo "$rounds rounds, $ev events ($kinds); peak RSS (VmHWM) $hwm MB."
    echo
    echo "| minute | RSS MB | fds |"
    echo "|---|---|---|"
    for s in "${samples[@]}"; do read -r m rss fds <<<"$s"; echo "| $m | $rss | $fds |"; done
  } >>"$BENCH_OUT"
}

{
  echo "## plumb watch vs plumb gather ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
  echo
} >"$BENCH_OUT"
if ((SOAK > 0)); then
  run_soak
else
  for n in $SIZES; do run_size "$n"; done
  {
    echo "fan-out: gather $FANOUT, watch $WATCH_FANOUT; interval ${INTERVAL}s, $ROUNDS steady rounds after the first; one hand change per steady round."
    echo
    echo "| nodes | gather wall s | gather CPU ms/node | gather peak RSS MB | watch CPU ms/node/round | watch ÷ gather CPU | round wall s | watch peak RSS MB | watch fds (max) | change→event s (avg / max) | interval s |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
  } >>"$BENCH_OUT"
fi
cat "$BENCH_OUT"
