#!/usr/bin/env bash
# The CPU each script test costs, daemons and testbed included: every test runs in a cgroup of
# its own (cgroup v1 cpuacct, or v2's cpu.stat), so a process it leaves running still counts.
# CI's time is CPU-bound on 2 cores (the tests, the main build and the sanitizer builds share
# them): this says which tests to make cheaper. Root only (it makes cgroups).
#   scripts/test-cpu.sh BUILD_DIR OUT_FILE [NAME_REGEX]     (default: every e2e and integration test)
# OUT_FILE gets one line per test: NAME wall=S cpu=S rc=N; each test's output is in OUT_FILE.d/.
set -u
B=$(cd "$1" && pwd) OUT=$2 R=${3:-^(integration|e2e)[.]}
SRC=$(cd "$(dirname "$0")/.." && pwd)
export PLUMB=$B/plumb PLUMB_SRC=$SRC PLUMB_BUILD=$B PLUMB_BMC_MODULE_APPLY=$B/tests/bmc_module_apply
if [[ -d /sys/fs/cgroup/cpuacct ]]; then CG_ROOT=/sys/fs/cgroup/cpuacct; else CG_ROOT=/sys/fs/cgroup; fi
export CG_ROOT OUT
cpu_ns() { # CGROUP: CPU used so far, in ns
  if [[ -f $1/cpuacct.usage ]]; then cat "$1/cpuacct.usage"
  else echo $(($(awk '/^usage_usec/ {print $2}' "$1/cpu.stat") * 1000)); fi
}
one() { # TEST (kind.name)
  local t=$1 kind=${1%%.*} name=${1#*.} cg rc t0 t1 procs
  cg=$CG_ROOT/plumb-test-cpu-$name-$$
  mkdir "$cg" || return 1
  procs=$cg/cgroup.procs; [[ -f $cg/tasks ]] && procs=$cg/tasks
  t0=$(date +%s.%N)
  bash -c "echo \$\$ > '$procs'; exec bash '$PLUMB_SRC/tests/$kind/$name.sh'" >"$OUT.d/$t.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  local ns; ns=$(cpu_ns "$cg")
  for p in $(cat "$procs"); do kill -9 "$p" 2>/dev/null; done
  sleep 0.5; rmdir "$cg" 2>/dev/null
  printf '%s wall=%.0f cpu=%.1f rc=%s\n' "$t" "$(echo "$t1 - $t0" | bc)" "$(echo "$ns / 1000000000" | bc -l)" "$rc" >>"$OUT"
}
export -f one cpu_ns
mkdir -p "$OUT.d"; : >"$OUT"
(cd "$B" && ctest -N -R "$R") | awk '/Test +#/ {print $3}' | grep -v '^unit' | xargs -P2 -I{} bash -c 'one {}'
awk '{split($2, w, "="); split($3, c, "="); W += w[2]; C += c[2]} END {printf "%d tests: wall %d s, cpu %.0f s\n", NR, W, C}' "$OUT"
