#!/usr/bin/env bash
# Fail closed when the scheduler goes away: slurmctld is killed mid-rollout (sinfo/squeue --json
# then answer exit 0 with an "errors" entry and no nodes) and started again 20 s later. plumb
# must admit nothing while it cannot read Slurm, keep the nodes in flight where they are, say
# that it waits, and carry on once Slurm answers: never more than max_unavailable out (sampled),
# no node failed, every node converged.
. "$(dirname "$0")/lib/apply.sh"
ap_up 5 "drain: { scheduler: slurm, timeout: 10m, scheduler_timeout: 5m }
max_unavailable: 2
canary: 0
max_failures: 0
health: [ \"nvidia-smi -L\" ]
health_timeout: 1m"
# The drained count (what plumb takes out): right after slurmctld restarts, Slurm shows every
# node "not responding" until its slurmd registers again, which is Slurm's blip, not plumb's.
echo 0 >"$AP_TMP/max_out"
(
  max=0
  while :; do
    n=$("$TB" exec sinfo -h -N -o '%T' 2>/dev/null | grep -c 'drain' || true)
    if ((n > max)); then max=$n; echo "$max" >"$AP_TMP/max_out"; fi
    sleep 0.25
  done
) &
AP_SAMPLER=$!
"$TB" exec env PLUMB_JOURNAL="$JOURNAL" PLUMB_HEARTBEAT_S=2 "$PLUMB" apply --repo "$REPO" --ref HEAD \
  --auto-approve --reboot-timeout 120 --poll-max-ms 1000 >"$AP_TMP/out" 2>"$AP_TMP/err" &
bg=$!
# Once the first batch is out (some node drained by plumb), the controller dies.
for _ in $(seq 1 300); do
  [[ $("$TB" exec sinfo -h -N -o '%E' 2>/dev/null | grep -c '^plumb:' || true) -ge 1 ]] && break
  sleep 0.1
done
"$TB" slurmctld stop
check "slurmctld is down" test "$("$TB" slurmctld status)" = down
sleep 20
"$TB" slurmctld start
set +e; wait "$bg"; RC=$?; set -e
max_out=$(sampler_stop)
check "apply finishes (rc=$RC)" test "$RC" = 0
check "it said it waited for the scheduler" grep -q "unavailable" "$AP_TMP/out"
check "Slurm never showed more than 2 drained (max seen: $max_out)" test "$max_out" -le 2
check "the sampler saw the rollout" test "$max_out" -ge 1
check "no node failed" bash -c "! grep -q '^FAILED' $AP_TMP/out"
for i in 1 2 3 4 5; do
  check "n$i converged" test "$(driver_of n$i)" = 550.90.07
  check "n$i back in service" test "$(state_of n$i)" = idle
done
check "no VIOLATION" test "$(violations)" = 0
ap_finish
