#!/usr/bin/env bash
# bench/gather/run.sh: plumb gather vs clush, pdsh, ansible -m raw and the floor (xargs -P ssh,
# with curve25519 and with OpenSSH's default kex) on testbed nodes, same fan-out, same probe
# script (the one plumb runs: `plumb gather --print-probe-script`).
#
#   bench/gather/run.sh [--sizes "64 256"] [--runs 3] [--fanout 64] [--tools "plumb floor-c25519 ..."]
#
# Per size: one testbed (tests/testbed/tb), then --runs rounds; each round runs every tool once,
# in turn, so a load spike on the shared machine hits all tools alike. Per run: wall time, client
# CPU (user+sys of the whole client process tree, /usr/bin/time), peak RSS of its largest process
# (/usr/bin/time %M) and, where a memory cgroup can be made, the peak memory of the whole client
# tree. A run counts only if every node's output came back complete. Reports medians, and
# plumb's ratio to each tool, as a Markdown table on stdout and in $BENCH_OUT (default
# bench/gather/last-run.md). Needs root (testbed); installs the peer tools with apt if missing.
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PLUMB=${PLUMB:-$SRC/build/plumb}
TB=${PLUMB_TB:-$SRC/tests/testbed/tb}
SIZES="64 256" RUNS=3 FANOUT=64
TOOLS="plumb floor-c25519 floor-default pdsh clush ansible"
INNER=0
while (($#)); do
  case $1 in
    --sizes) SIZES=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --fanout) FANOUT=$2; shift 2 ;;
    --tools) TOOLS=$2; shift 2 ;;
    --inner) INNER=1; shift ;;
    *) echo "usage: $0 [--sizes \"64 256\"] [--runs 3] [--fanout 64] [--tools LIST]" >&2; exit 2 ;;
  esac
done
BENCH_OUT=${BENCH_OUT:-$SRC/bench/gather/last-run.md}

# ---------------------------------------------------------------------------------------------
# Inner part: runs inside the testbed's network namespace (tb exec), once per size.
if ((INNER)); then
  : "${TB_RUN:?}" "${N:?}" "${WORK:?}"
  cfg=$TB_RUN/client/ssh_config
  repo=$WORK/repo
  script=$("$PLUMB" gather --repo "$repo" --print-probe-script)
  nonce=$(grep -oE 'plumb:[0-9a-f]{8,64}' <<<"$script" | head -1 | cut -d: -f2 || true)
  default_kex=$(ssh -G -F /dev/null localhost 2>/dev/null | awk '/^kexalgorithms /{print $2}')
  hosts=$WORK/hosts
  cut -d' ' -f1 "$TB_RUN/client/nodes.txt" | head -n "$N" >"$hosts"
  printf '[nodes]\n' >"$WORK/ansible.ini"
  printf '[defaults]\n' >"$WORK/ansible.cfg"   # no user or system config: defaults only
  cat "$hosts" >>"$WORK/ansible.ini"
  # Marker lines one node prints: a run is complete when the output holds N times as many.
  per_node=$(ssh -F "$cfg" n1 "$script" | grep -c "$nonce" || true)
  ((per_node > 0)) || { echo "bench: the probe printed no markers on n1" >&2; exit 1; }

  # Memory cgroup for the whole client tree: v2 (memory.peak) or v1 (max_usage_in_bytes).
  cg_make() {
    local base
    if [[ -f /sys/fs/cgroup/cgroup.controllers ]] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
      base=/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)
      mkdir "$base/plumb-bench-$$-$1" 2>/dev/null && echo "$base/plumb-bench-$$-$1" && return
    fi
    base=/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup)
    mkdir "$base/plumb-bench-$$-$1" 2>/dev/null && echo "$base/plumb-bench-$$-$1" && return
    echo ""
  }
  cg_peak() {
    [[ -n $1 ]] || { echo NA; return; }
    if [[ -f $1/memory.peak ]]; then cat "$1/memory.peak"; else cat "$1/memory.max_usage_in_bytes"; fi
  }

  # user+nice+system+irq+softirq jiffies of the whole machine (/proc/stat is not namespaced).
  cpu_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8; exit}' /proc/stat; }

  run_tool() { # tool -> runs it, all output to stdout
    case $1 in
      plumb) "$PLUMB" gather --repo "$repo" --fanout "$FANOUT" --format json ;;
      floor-c25519)
        xargs -P "$FANOUT" -I{} ssh -F "$cfg" -o KexAlgorithms=curve25519-sha256 {} "$script" <"$hosts" ;;
      floor-default)
        xargs -P "$FANOUT" -I{} ssh -F "$cfg" -o KexAlgorithms="$default_kex" {} "$script" <"$hosts" ;;
      pdsh)
        PDSH_RCMD_TYPE=ssh PDSH_SSH_ARGS="-F $cfg -a -x -l%u %h" \
          pdsh -f "$FANOUT" -w "^$hosts" "$script" ;;
      clush)
        clush -f "$FANOUT" -w "$(paste -sd, "$hosts")" -o "-F $cfg" -- "$script" ;;
      ansible)
        ANSIBLE_SSH_ARGS="-F $cfg -o ControlMaster=no" ANSIBLE_NOCOLOR=1 \
          ANSIBLE_LOCAL_TEMP=$WORK/ansible-tmp ANSIBLE_CONFIG=$WORK/ansible.cfg \
          ansible all -i "$WORK/ansible.ini" -f "$FANOUT" -m raw -a "$script" ;;
      *) echo "unknown tool $1" >&2; return 2 ;;
    esac
  }

  complete() { # tool outfile -> 0 if every node's output is complete
    if [[ $1 == plumb ]]; then
      python3 - "$2" "$N" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["summary"]
sys.exit(0 if s["read"] == int(sys.argv[2]) and s["module_errors"] == 0 else 1)
PY
    else
      [[ $(grep -c "$nonce" "$2" || true) -ge $((N * per_node)) ]]
    fi
  }

  export -f run_tool
  export cfg repo script hosts FANOUT PLUMB WORK default_kex
  for ((r = 1; r <= RUNS; r++)); do
    for tool in $TOOLS; do
      out=$WORK/out.$tool.$r
      cg=$(cg_make "$tool-$r")
      cpu0=$(cpu_ticks)
      /usr/bin/time -f '%e %U %S %M' -o "$WORK/time" \
        bash -c '[[ -z $1 ]] || echo $$ >"$1/cgroup.procs"; shift; exec "$@"' _ "$cg" \
        bash -c 'run_tool "$1"' _ "$tool" >"$out" 2>"$out.err" || true
      cpu1=$(cpu_ticks)
      peak=$(cg_peak "$cg")
      [[ -z $cg ]] || rmdir "$cg" 2>/dev/null || true
      ok=1
      complete "$tool" "$out" || ok=0
      # /usr/bin/time prefixes "Command exited with non-zero status N" when the tool fails.
      read -r wall user sys rss < <(tail -n 1 "$WORK/time") || true
      # Whole-machine CPU during the run (all cores, all processes), in seconds: what the
      # nodes (sshd, the probe, the fakes) burnt on top of the client is this minus the client.
      machine=$(awk -v a="$cpu0" -v b="$cpu1" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.2f", (b-a)/hz}')
      echo "$N $tool $r $ok $wall $user $sys $rss $peak $machine" | tee -a "$WORK/results"
      ((ok)) || cp "$out.err" "$WORK/failed.$tool.$r.err"
      rm -f "$out"
    done
  done
  exit 0
fi

# ---------------------------------------------------------------------------------------------
# Outer part: peers, testbeds, the report.
[[ $(id -u) == 0 ]] || { echo "bench: run as root (the testbed needs namespaces)" >&2; exit 1; }
[[ -x $PLUMB ]] || { echo "bench: build plumb first (make build); PLUMB=$PLUMB" >&2; exit 1; }
need=()
for p in clustershell:clush pdsh:pdsh ansible-core:ansible time:/usr/bin/time; do
  command -v "${p#*:}" >/dev/null || need+=("${p%%:*}")
done
if ((${#need[@]})); then
  echo "bench: installing ${need[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

results=$(mktemp)
for N in $SIZES; do
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/plumb-bench.XXXXXX")
  export TB_RUN=$WORK/$(basename "$WORK")   # the netns is named after it: unique
  "$TB" up "$N" >/dev/null
  trap '"$TB" down >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
  "$TB" cluster-repo "$WORK/repo" >/dev/null
  "$TB" exec env N="$N" WORK="$WORK" PLUMB="$PLUMB" bash "$0" --inner --runs "$RUNS" \
    --fanout "$FANOUT" --tools "$TOOLS"
  cat "$WORK/results" >>"$results"
  "$TB" down >/dev/null 2>&1 || true
  rm -rf "$WORK"
  trap - EXIT
done

python3 - "$results" "$FANOUT" "$RUNS" >"$BENCH_OUT" <<'PY'
import statistics, sys, collections, platform, os, datetime
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
fanout, runs = sys.argv[2], sys.argv[3]
data = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(list)))
fails = collections.Counter()
for row in rows:
    n, tool, r, ok, wall, user, sys_, rss, peak = row[:9]
    machine = float(row[9]) if len(row) > 9 else float("nan")
    if ok != "1":
        fails[(n, tool)] += 1
        continue
    d = data[int(n)][tool]
    d["wall"].append(float(wall)); d["cpu"].append(float(user) + float(sys_))
    d["rss"].append(int(rss) / 1024.0)
    if peak != "NA": d["tree"].append(int(peak) / 1048576.0)
    d["node"].append(max(0.0, machine - float(user) - float(sys_)))
med = lambda v: statistics.median(v) if v else float("nan")
print(f"Measured {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC on {platform.node() or 'this machine'}"
      f" ({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end);"
      f" fan-out {fanout}, median of {runs} runs.\n")
for n in sorted(data):
    tools = data[n]
    p = tools.get("plumb")
    print(f"### {n} nodes\n")
    print("| tool | wall s | client CPU s | node-side CPU s | peak RSS MB (largest process) | peak memory MB (client tree) | plumb ÷ tool: wall | CPU | tree memory |")
    print("|---|---|---|---|---|---|---|---|---|")
    for t, d in tools.items():
        w, c, r, m = med(d["wall"]), med(d["cpu"]), med(d["rss"]), med(d["tree"])
        def ratio(k):
            if not p or not d[k] or not p[k]: return "n/a"
            return f"{med(p[k]) / med(d[k]):.2f}x"
        mm = f"{m:.0f}" if d["tree"] else "n/a"
        nd = med(d["node"])
        print(f"| {t} | {w:.2f} | {c:.2f} | {nd:.2f} | {r:.1f} | {mm} | {ratio('wall')} | {ratio('cpu')} | {ratio('tree')} |")
    bad = [f"{t} ({c} of {runs})" for (nn, t), c in fails.items() if int(nn) == n]
    if bad: print(f"\nIncomplete runs (not counted): {', '.join(bad)}")
    if p and p["node"]:
        cores = os.cpu_count()
        print(f"\nNode side: the testbed's sshd + probe + fakes burnt a median {med(p['node']):.1f} CPU s during plumb's run"
              f" (machine CPU minus the client's), on the same {cores} cores as the client. The smallest wall any tool"
              f" can reach here is (client CPU + node-side CPU) / {cores}; for plumb that bound is"
              f" {(med(p['cpu']) + med(p['node'])) / cores:.2f} s.")
    print()
PY
cat "$BENCH_OUT"
rm -f "$results"
