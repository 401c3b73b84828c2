#!/usr/bin/env bash
# Rollout schedule efficiency: plumb apply of a driver + CUDA + NCCL upgrade over N testbed nodes
# (default 32) with real Slurm, max_unavailable 25%, no canary. Reports the wall time of the
# rollout against the ideal schedule for the policy: the sum over batches of the slowest node's
# time in that batch, from the journal (nodes.started_at/ended_at). Efficiency = ideal / wall.
#   bench/rollout/run.sh [N] [PLUMB]     (root; uses tests/testbed/tb)
set -euo pipefail
N=${1:-32}
src=$(cd "$(dirname "$0")/../.." && pwd)
PLUMB=$(realpath "${2:-$src/build/plumb}")
TB=$src/tests/testbed/tb
tmp=$(mktemp -d "${TMPDIR:-/tmp}/plumb-bench-rollout.XXXXXX")
chmod 755 "$tmp"   # munged wants every directory above its socket searchable
export TB_RUN=$tmp/tb TB_NETNS=tb-${tmp##*.}
cleanup() { "$TB" down >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
t0=$(date +%s.%N)
"$TB" up "$N" --slurm >/dev/null
cat >"$tmp/bench-rolling.yaml" <<'YAML'
drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 25%
canary: 0
max_failures: 0
health: [ "nvidia-smi -L" ]
YAML
"$TB" cluster-repo "$tmp/repo" --stack "$src/tests/integration/data/apply/gpu-2025q4.yaml" \
  --rollout "$tmp/bench-rolling.yaml" >/dev/null
echo "testbed: $N nodes up in $(echo "$(date +%s.%N) - $t0" | bc) s" >&2
s=$(date +%s.%N)
"$TB" exec env PLUMB_JOURNAL="$tmp/journal.db" "$PLUMB" apply --repo "$tmp/repo" --ref HEAD \
  --auto-approve --poll-max-ms 500 >"$tmp/out" 2>"$tmp/err" || { tail -20 "$tmp/out" "$tmp/err"; exit 1; }
e=$(date +%s.%N)
python3 - "$tmp/journal.db" "$s" "$e" "$N" <<'PY'
import json, sqlite3, sys
from datetime import datetime
db = sqlite3.connect(sys.argv[1])
run_id, plan_json, started, ended = db.execute(
    "select id, plan_json, started_at, ended_at from runs order by started_at desc limit 1").fetchone()
plan = json.loads(plan_json)
t = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
nodes = {n: (t(a), t(b)) for n, a, b in db.execute(
    "select node, started_at, ended_at from nodes where run_id=? and status='done'", (run_id,))}
ideal = 0.0
rows = []
for b in plan["batches"]:
    durs = [nodes[n][1] - nodes[n][0] for n in b["nodes"] if n in nodes]
    if len(durs) != len(b["nodes"]):
        sys.exit("not every node of batch %d is done" % b["index"])
    ideal += max(durs)
    rows.append((b["index"], len(b["nodes"]), max(durs), sum(durs) / len(durs)))
wall_run = t(ended) - t(started)                 # the run as the journal saw it
wall_cmd = float(sys.argv[3]) - float(sys.argv[2])   # the whole command (load, plan, lock...)
steps = {}
for step, ms in db.execute("select step, duration_ms from steps where run_id=?", (run_id,)):
    k = step.split(":")[0]
    steps.setdefault(k, []).append(ms)
print(f"nodes={sys.argv[4]} batches={len(plan['batches'])} run={run_id}")
for i, n, mx, avg in rows:
    print(f"  batch {i}: {n} nodes, slowest {mx:.1f} s, mean {avg:.1f} s")
print("  mean step ms: " + ", ".join(f"{k} {sum(v)/len(v):.0f}" for k, v in steps.items()))
print(f"ideal (sum of slowest per batch) = {ideal:.1f} s")
print(f"rollout wall (journal)           = {wall_run:.1f} s  efficiency {ideal / wall_run:.3f}")
print(f"command wall (incl. plan/gather) = {wall_cmd:.1f} s  efficiency {ideal / wall_cmd:.3f}")
PY
