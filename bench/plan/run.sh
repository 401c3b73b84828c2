#!/usr/bin/env bash
# Plan and drift for N synthetic nodes (default 10000) from recorded facts: no network, no
# scheduler, no BMC. Prints wall time and peak RSS of each command (/usr/bin/time -v), and each
# command's ratio to the peer baseline: python3's json.load of the same snapshot, timed in the
# same run (the target is plan and drift within 1.0x of that parse, under 2.5 GB at 100,000).
# usage: bench/plan/run.sh [N] [PLUMB_BINARY]
# REPEAT=k (default 1) runs each command k times, json.load included, and keeps the fastest
# wall time and the largest peak RSS: on a VM whose page-fault cost moves from run to run
# (json.load of the same file: 18-48 s), the fastest of a few is the steadiest ratio.
set -euo pipefail
N=${1:-10000}
REPEAT=${REPEAT:-1}
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || { echo "REPEAT must be a whole number of runs, 1 or more" >&2; exit 2; }
PLUMB=${2:-$(cd "$(dirname "$0")/../.." && pwd)/build/plumb}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/plumb-bench-plan.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$PLUMB" version
echo "cores: $(nproc)"
python3 "$HERE/gen.py" --nodes "$N" --template "$HERE/template-facts.json" --out "$TMP"
echo "snapshot: $(du -m "$TMP/facts.json" | cut -f1) MB"
BASE=""   # json.load's wall seconds, once measured
seconds() { # h:mm:ss.ss or m:ss.ss -> seconds
  awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"
}
measure() { # NAME CMD...
  local name=$1; shift
  # The fastest of the runs that ended as the command should (a crash is fast); exit statuses
  # that differ between runs print as "varies".
  local rc wall rss s ratio="" best="" most=0 walls="" code="" first_rc=""
  for ((k = 0; k < REPEAT; k++)); do
    rc=0
    /usr/bin/time -v "$@" >"$TMP/$name.out" 2>"$TMP/$name.time" || rc=$?
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$TMP/$name.time")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$TMP/$name.time")
    s=$(seconds "$wall")
    walls+=" $s"
    [[ -z $first_rc ]] && first_rc=$rc
    [[ $rc != "$first_rc" ]] && code="varies"
    # 0 and 2 (drift found) are how these commands end; anything else is not a time to keep.
    if [[ $rc == 0 || $rc == 2 ]] && { [[ -z $best ]] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; }; then best=$s; fi
    ((rss > most)) && most=$rss
  done
  rc=${code:-$first_rc}
  best=${best:-$s}   # no run ended well: the last one's time, with its exit status shown
  if [[ -n $BASE ]]; then ratio=$(awk -v a="$best" -v b="$BASE" 'BEGIN { printf "  %.2fx json.load", a / b }'); fi
  local all=""
  ((REPEAT > 1)) && all="  (runs:$walls)"
  printf '%-34s exit %s  wall %6.2f s  peak RSS %5d MB%s%s\n' "$name" "$rc" "$best" $((most / 1024)) "$ratio" "$all"
  LAST=$best
}
# The peer: parsing the snapshot and nothing else, as any Python tool reading it must.
measure "python3 json.load (facts only)" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/facts.json"
BASE=$LAST
measure "validate (load only)" "$PLUMB" validate --repo "$TMP/repo"
measure "plan (text)" "$PLUMB" plan --repo "$TMP/repo" --facts "$TMP/facts.json" --no-scheduler --no-bmc
measure "plan --out plan.json" "$PLUMB" plan --repo "$TMP/repo" --facts "$TMP/facts.json" --no-scheduler --no-bmc --format json --out "$TMP/plan.json"
measure "drift (text)" "$PLUMB" drift --repo "$TMP/repo" --facts "$TMP/facts.json" --no-bmc
measure "drift --format junit" "$PLUMB" drift --repo "$TMP/repo" --facts "$TMP/facts.json" --no-bmc --format junit --out "$TMP/d.xml"
for f in json sarif prom html; do
  measure "drift --format $f" "$PLUMB" drift --repo "$TMP/repo" --facts "$TMP/facts.json" --no-bmc --format "$f" --out "$TMP/d.$f"
done
grep -E '^Plan:|^Peak|^Estimated' "$TMP/plan (text).out" || true
tail -1 "$TMP/drift (text).out" || true
