#!/usr/bin/env bash
# Ctrl-C during an apply: plumb gets SIGINT while the first node is mid-rollout. It must exit 130,
# leave every node either untouched or drained with a journal record of its steps, and a later
# `plumb apply --resume` must finish the run: every node converged, each install and reboot done
# once, nothing changed under a job, every node back in service.
. "$(dirname "$0")/lib/apply.sh"
ap_up 2 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 1
canary: 1
max_failures: 0
health: [ \"nvidia-smi -L\" ]
health_timeout: 1m"

# Start the apply in the background and interrupt it once n1's driver install has happened
# (the node is drained and being changed: the worst moment for a Ctrl-C).
"$TB" exec env PLUMB_JOURNAL="$JOURNAL" "$PLUMB" apply --repo "$REPO" --ref HEAD --auto-approve \
  --poll-max-ms 500 >"$AP_TMP/out" 2>"$AP_TMP/err" &
wrapper=$!
for _ in $(seq 1 300); do
  [[ $(count_events n1 'apt-get install nvidia-driver-550') -ge 1 ]] && break
  sleep 0.1
done
check "n1's install started before the interrupt" test "$(count_events n1 'apt-get install nvidia-driver-550')" -ge 1
# The plumb process itself (tb exec may run it under nsenter): its command line names this
# test's own repo path, and its process name is plumb.
plumb_pid=
for p in $(pgrep -f -- "--repo $REPO --ref HEAD --auto-approve" || true); do
  [[ $(cat "/proc/$p/comm" 2>/dev/null) == plumb ]] && plumb_pid=$p
done
check "found the running plumb" test -n "$plumb_pid"
[[ -z $plumb_pid ]] || kill -INT "$plumb_pid"
set +e; wait "$wrapper"; RC=$?; set -e
check "plumb exits 130 on Ctrl-C (rc=$RC)" test "$RC" = 130

# Whatever plumb left drained, the journal knows about.
drained=$(slurm sinfo -h -N -o '%N %E' | awk '$2 ~ /^plumb:/ {print $1}')
journaled=$(python3 -c 'import sqlite3,sys; print(" ".join(sorted({r[0] for r in sqlite3.connect(sys.argv[1]).execute("select distinct node from steps")})))' "$JOURNAL")
for n in $drained; do
  check "$n drained by plumb has journal steps" grep -qw "$n" <<<"$journaled"
done
plumb_in runs --format json >"$AP_TMP/runs.json"
check "the journal shows the run interrupted, not done" \
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if len(j)==1 and j[0]["outcome"]!="done" else 1)' "$AP_TMP/runs.json"

apply --resume --reboot-grace 8 --poll-max-ms 500
check "--resume finishes the run (rc=$RC)" test "$RC" = 0
for n in n1 n2; do
  check "$n converged to driver 550.90.07" test "$(driver_of $n)" = 550.90.07
  check "$n: driver installed once" test "$(count_events $n 'apt-get install nvidia-driver-550')" = 1
  check "$n: rebooted once" test "$(count_events $n 'reboot requested')" = 1
  check "$n back in service" test "$(state_of $n)" = idle
done
check "no VIOLATION" test "$(violations)" = 0
ap_finish
