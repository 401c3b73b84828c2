#!/usr/bin/env bash
# plumb apply on real Slurm: a driver + CUDA + NCCL upgrade rolls over 6 nodes, waiting for a
# running job, never more than max_unavailable out (sampled from Slurm, the admin-drained node
# counted), nothing changed while a job runs (the testbed's VIOLATION check), the admin-drained
# node upgraded but left drained as the admin left it; then runs/history and a clean re-plan.
# Stack tags: the plan counts the stack's nodes, every node ends showing Slurm features
# stack_gpu-2025q4 and stack_commit_<12 hex> (an admin's feature kept), a job that asks for
# the stack runs; a slurmctld restart loses them and `plumb drift --tag-stacks` puts them back.
. "$(dirname "$0")/lib/apply.sh"
ap_up 6 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 2
canary: 1
max_failures: 0
health: [ \"nvidia-smi -L\" ]
health_timeout: 1m"
slurm scontrol update nodename=n6 state=drain reason="RMA gpu3"
slurm scontrol update nodename=n1 availablefeatures=ib_ndr activefeatures=ib_ndr
features_of() { slurm sinfo -h -N -n "$1" -o %f; }
jid=$(job_on n2 8)
check "a job runs on n2 before the apply" test "$(slurm squeue -h -j "$jid" -o %T)" = RUNNING
sampler_start
apply --ref HEAD --auto-approve --reboot-timeout 120 --poll-max-ms 1000
max_out=$(sampler_stop)
check "apply exits 0 (rc=$RC)" test "$RC" = 0
for i in 1 2 3 4 5 6; do
  check "n$i runs driver 550.90.07" test "$(driver_of n$i)" = 550.90.07
  check "n$i: one driver install, one reboot" test "$(count_events n$i 'apt-get install nvidia-driver-550')$(count_events n$i 'reboot requested')" = 11
done
check "no change happened while a job ran (no VIOLATION in events.log)" test "$(violations)" = 0
check "the job on n2 finished before n2 changed" \
  bash -c "! grep -q . <(slurm squeue -h -j $jid -o %T 2>/dev/null)"
check "Slurm never showed more than 2 nodes out (max seen: $max_out, admin's n6 included)" test "$max_out" -le 2
check "at least 2 were out at some point (the sampler saw the rollout)" test "$max_out" -ge 2
check "n6 (admin-drained) stays drained" bash -c "[[ \$($TB exec sinfo -h -N -n n6 -o %T) == drained ]]"
check "n6 keeps the admin's reason" test "$(reason_of n6)" = "RMA gpu3"
for i in 1 2 3 4 5; do check "n$i back in service" test "$(state_of n$i)" = idle; done
check "the marker records the commit" bash -c "$TB ssh n3 cat /var/lib/plumb/marker.json | grep -q \$(git -C $REPO rev-parse HEAD)"
plumb_in runs --format json >"$AP_TMP/runs.json"
check "plumb runs shows the run done" pyj "$AP_TMP/runs.json" 'j[0]["outcome"] == "done"'
plumb_in history n2 >"$AP_TMP/hist.txt"
check "plumb history n2 lists wait-drained, the install and the reboot" \
  bash -c "grep -q wait-drained $AP_TMP/hist.txt && grep -q 'apply:nvidia_driver.install' $AP_TMP/hist.txt && grep -q wait-boot $AP_TMP/hist.txt"
apply --ref HEAD --auto-approve
check "a second apply finds nothing to do" bash -c "test $RC = 0 && grep -q 'nothing to apply' $AP_TMP/out"

# --- Stack tags.
sha12=$(git -C "$REPO" rev-parse HEAD | cut -c1-12)
plumb_in plan --repo "$REPO" --ref HEAD >"$AP_TMP/plan2" 2>&1 || true
check "plan counts the stack: 6 nodes now and after" \
  grep -Eq '^  gpu-2025q4 +6 -> 6$' "$AP_TMP/plan2"
for i in 1 2 3 4 5 6; do
  check "n$i shows the stack and the commit in Slurm ($(features_of n$i))" \
    bash -c "[[ ,\$($TB exec sinfo -h -N -n n$i -o %f), == *,stack_gpu-2025q4,* && ,\$($TB exec sinfo -h -N -n n$i -o %f), == *,stack_commit_$sha12,* ]]"
done
check "n1 keeps the admin's feature ib_ndr" bash -c "[[ ,\$($TB exec sinfo -h -N -n n1 -o %f), == *,ib_ndr,* ]]"
check "a job that asks for the stack runs" \
  slurm sbatch -W --constraint=stack_gpu-2025q4 --chdir=/tmp -o /dev/null --wrap true
"$TB" slurmctld stop >/dev/null
"$TB" slurmctld start >/dev/null
check "slurmctld restarted: Slurm forgot the features set by scontrol ($(features_of n2))" \
  test "$(features_of n2)" = "(null)"
set +e
plumb_in drift --repo "$REPO" --ref HEAD --tag-stacks >"$AP_TMP/drift" 2>"$AP_TMP/drift.err"
drc=$?
set -e
check "drift --tag-stacks: in sync (exit $drc), the tags written listed" \
  bash -c "test $drc = 0 && grep -q '^stack tag: n2 shows gpu-2025q4@$sha12 (was (none): in sync)' '$AP_TMP/drift.err'"
for i in 2 5; do
  check "n$i shows the stack again ($(features_of n$i))" \
    bash -c "[[ ,\$($TB exec sinfo -h -N -n n$i -o %f), == *,stack_gpu-2025q4,* ]]"
done
check "drift --tag-stacks changed no node's service: n6 still drained by the admin" \
  test "$(reason_of n6)" = "RMA gpu3"
ap_finish
