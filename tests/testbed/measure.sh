#!/bin/bash
# measure.sh N [--slurm]: cost of a testbed of N nodes. Starts it inside its
# own memory + cpuacct cgroup (cgroup v1, or one cgroup v2 group), then
# prints one line: wall and CPU time of `tb up` (until every sshd listens and,
# with --slurm, every node is idle), memory after settling (cgroup usage:
# processes + page cache + kernel memory), per node, and wall time of
# `tb down`. The machine may be shared: CPU time is the steadier number.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${1:?usage: measure.sh N [--slurm]}
shift
export TB_RUN=${TB_RUN:-$(mktemp -d "${TMPDIR:-/tmp}/plumb-tb-measure.XXXXXX")}
cg=plumb-tb-measure-$$
if [[ -d /sys/fs/cgroup/memory ]]; then
  mem=/sys/fs/cgroup/memory/$cg cpu=/sys/fs/cgroup/cpuacct/$cg
  mkdir -p "$mem" "$cpu"
  usage() { cat "$mem/memory.usage_in_bytes"; }
  cpu_ns() { cat "$cpu/cpuacct.usage"; }
  join() { echo "$1" >"$mem/cgroup.procs"; echo "$1" >"$cpu/cgroup.procs"; }
  cleanup() { rmdir "$mem" "$cpu" 2>/dev/null || true; }
else
  mem=/sys/fs/cgroup/$cg cpu=$mem
  mkdir -p "$mem"
  usage() { cat "$mem/memory.current"; }
  cpu_ns() { echo $(($(sed -n 's/^usage_usec //p' "$mem/cpu.stat") * 1000)); }
  join() { echo "$1" >"$mem/cgroup.procs"; }
  cleanup() { rmdir "$mem" 2>/dev/null || true; }
fi
trap cleanup EXIT
ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

t0=$(ms)
# the subshell joins the cgroups first, so everything tb up starts is counted
(join "$BASHPID" && exec "$here/tb" up "$n" "$@" >/dev/null 2>"$TB_RUN.up.log")
t1=$(ms)
cpu_up=$(($(cpu_ns) / 1000000))
sleep 3
m=$(($(usage) / 1048576))
t2=$(ms)
stop=$("$here/tb" down 2>&1 | sed -n "s/.*stopped in \([0-9]*\) ms.*/\1/p")
t3=$(ms)
echo "N=$n $*: up ${cpu_up:+$((t1 - t0)) ms wall, $cpu_up ms CPU}; memory $m MiB ($((m * 1024 / n)) KiB/node); down $((t3 - t2)) ms wall (processes stopped in ${stop:-?} ms, the rest deletes the run dir); load $(cut -d' ' -f1 /proc/loadavg)"
rm -f "$TB_RUN.up.log"
