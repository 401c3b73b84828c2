#!/usr/bin/env bash
# The CPU each script test costs, daemons and testbed included: every test runs in a cgroup of
# its own (cgroup v1 cpuacct, or v2's cpu.stat), so a process it leaves running still counts.
# CI's time is CPU-bound on 2 cores (the tests, the main build and the sanitizer builds share
# them): this says which tests to make cheaper. Root only (it makes cgroups).
#   scripts/test-cpu.sh BUILD_DIR OUT_FILE [NAME_REGEX]     (default: every e2e and integration test)
# OUT_FILE gets one line per test: NAME wall=S cpu=S rc=N [left=N] (left: processes still
# running after it ended, killed); each test's output is in OUT_FILE.d/.
set -u
(($# >= 2)) || { echo "usage: $0 BUILD_DIR OUT_FILE [NAME_REGEX]" >&2; exit 2; }
B=$(cd "$1" && pwd) OUT=$2 R=${3:-^(integration|e2e)[.]}
SRC=$(cd "$(dirname "$0")/.." && pwd)
export PLUMB=$B/plumb PLUMB_SRC=$SRC PLUMB_BUILD=$B PLUMB_BMC_MODULE_APPLY=$B/tests/bmc_module_apply
if [[ -d /sys/fs/cgroup/cpuacct ]]; then CG_ROOT=/sys/fs/cgroup/cpuacct; else CG_ROOT=/sys/fs/cgroup; fi
probe=$CG_ROOT/plumb-test-cpu-probe-$$
mkdir "$probe" 2>/dev/null && rmdir "$probe" ||
  { echo "test-cpu: cannot make a cgroup under $CG_ROOT (run as root)" >&2; exit 1; }
export CG_ROOT OUT
cpu_ns() { # CGROUP: CPU used so far, in ns
  if [[ -f $1/cpuacct.usage ]]; then cat "$1/cpuacct.usage"
  else echo $(($(awk '/^usage_usec/ {print $2}' "$1/cpu.stat") * 1000)); fi
}
one() { # TEST (kind.name)
  local t=$1 kind=${1%%.*} name=${1#*.} cg procs rc t0 t1 ns left=0 i
  cg=$CG_ROOT/plumb-test-cpu-$name-$$
  if ! mkdir "$cg"; then echo "$t error=cgroup" >>"$OUT"; return; fi
  procs=$cg/cgroup.procs; [[ -f $cg/tasks ]] && procs=$cg/tasks
  t0=$(date +%s%N)
  bash -c 'echo $$ >"$1"; exec bash "$2"' _ "$procs" "$PLUMB_SRC/tests/$kind/$name.sh" >"$OUT.d/$t.log" 2>&1
  rc=$?
  t1=$(date +%s%N)
  ns=$(cpu_ns "$cg")
  for i in $(seq 50); do   # whatever the test left running: killed, counted, until none is left
    [[ -n $(<"$procs") ]] || break   # a cgroup file reads as size 0 whatever it holds
    left=$(wc -l <"$procs")
    xargs -r kill -9 <"$procs" 2>/dev/null
    sleep 0.1
  done
  rmdir "$cg" || echo "test-cpu: $cg left behind" >&2
  awk -v t="$t" -v w="$((t1 - t0))" -v c="$ns" -v rc="$rc" -v left="$left" 'BEGIN {
    printf "%s wall=%.0f cpu=%.1f rc=%s%s\n", t, w / 1e9, c / 1e9, rc, (left > 0 ? " left=" left : "") }' >>"$OUT"
}
export -f one cpu_ns
mkdir -p "$OUT.d"; : >"$OUT"
(cd "$B" && ctest -N -R "$R") | awk '/Test +#/ {print $3}' | grep -v '^unit' | xargs -r -P2 -n1 bash -c 'one "$1"' _
awk '{split($2, w, "="); split($3, c, "="); W += w[2]; C += c[2]} END {printf "%d tests: wall %d s, cpu %.0f s\n", NR, W, C}' "$OUT"
