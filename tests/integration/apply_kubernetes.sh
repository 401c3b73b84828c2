#!/usr/bin/env bash
# plumb's Kubernetes drainer through the real kubectl, against the testbed's Kubernetes API
# emulator (tests/testbed/kube), and a rollout over a mixed inventory: n1, n2 in Slurm (rollout
# "rolling": one node out at a time), n3, n4 in Kubernetes (rollout "k8s", its own policy: two
# out at a time, the admin's cordon of n4 counted; drain timeout 40s).
#  1. A PodDisruptionBudget that forbids evicting n3's trainer pod: apply --limit n3 cordons n3,
#     records the reason in the plumb.dev/drain-reason annotation, retries the eviction (429s)
#     and fails n3 at the drain timeout naming the pod; nothing is installed on n3; n3 stays
#     cordoned with the failure in its annotation.
#  2. apply --retry-failed: still refused (429) until the test relaxes the budget, then the pod
#     is evicted, goes after its grace period, n3 converges, is uncordoned and its annotation
#     removed. The DaemonSet pod stays (never evicted).
#  3. The mixed rollout (--ref HEAD, all nodes) in one run: the Slurm nodes drain and resume in
#     Slurm, n4 (cordoned by an admin beforehand, a DaemonSet and a mirror pod only) is upgraded
#     but stays cordoned, without plumb's annotation; n3 is in sync; nothing runs twice. Every
#     node shows its stack: labels plumb.dev/stack and plumb.dev/commit on n3, n4 (an admin's
#     label kept), Slurm features on n1, n2.
# Needs kubectl (scripts/install-deps.sh installs Debian's kubernetes-client): without it the test
# fails, unless PLUMB_SKIP_KUBE=1 (then it is skipped, exit 77).
if ! command -v kubectl >/dev/null; then
  if [[ ${PLUMB_SKIP_KUBE:-} == 1 ]]; then echo "skipped: no kubectl (PLUMB_SKIP_KUBE=1)"; exit 77; fi
  echo "FAIL no kubectl on PATH: run scripts/install-deps.sh (Debian's kubernetes-client), or PLUMB_SKIP_KUBE=1 to skip"
  echo "0 passed, 1 failed"
  exit 1
fi
. "$(dirname "$0")/lib/apply.sh"
ap_up 4 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 1
canary: 0
max_failures: 0
health: [ \"nvidia-smi -L\" ]
health_timeout: 1m"
KE=$PLUMB_SRC/tests/testbed/kube/kubeemu
KD=$AP_TMP/kube
mkdir -p "$AP_TMP/home"
kube_down() { "$TB" exec "$KE" down "$KD" >/dev/null 2>&1 || true; ap_down; }
trap kube_down EXIT
# The emulator lives in the testbed's network namespace, where plumb and kubectl run.
"$TB" exec "$KE" up "$KD" >/dev/null || { echo "FAIL kubeemu up:"; tail -20 "$KD/emulator.log"; exit 1; }
kctl() { "$TB" exec "$KE" ctl "$KD" "$@"; }
kubectl_in() { "$TB" exec env HOME="$AP_TMP/home" KUBECONFIG="$KD/kubeconfig" kubectl "$@"; }
for n in n3 n4; do kctl node-add "$n" >/dev/null; done
kctl pod-add ml/trainer-7f9c-a --node n3 --label app=trainer --grace 2 >/dev/null
kctl pod-add monitoring/dcgm-exporter-n3 --node n3 --owner DaemonSet/dcgm-exporter >/dev/null
kctl pod-add monitoring/dcgm-exporter-n4 --node n4 --owner DaemonSet/dcgm-exporter >/dev/null
kctl pod-add kube-system/node-agent-n4 --node n4 --mirror >/dev/null
kctl pdb-add ml/trainer --selector app=trainer --min-available 1 >/dev/null
kubectl_in cordon n4 >/dev/null   # an admin's cordon, before any run

# The cluster repo: n3, n4 move to the group "k8s" with its own rollout.
cat >"$REPO/rollouts/k8s.yaml" <<'EOF'
drain: { scheduler: kubernetes, timeout: 40s }
max_unavailable: 2
canary: 0
max_failures: 0
health: [ "nvidia-smi -L" ]
health_timeout: 1m
EOF
python3 - "$REPO/inventory.yaml" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r"(name: n[34],.*groups: )\[gpu\]", r"\1[k8s]", s)
s = re.sub(r"^(  gpu: \{ (.*) \})$", r"\1\n  k8s: { stack: gpu-2025q4, rollout: k8s }", s, flags=re.M)
open(p, "w").write(s)
PY
git -C "$REPO" add -A && git -C "$REPO" -c user.name=t -c user.email=t@example.invalid commit -qm "n3, n4 in Kubernetes"
kapply() { # ARGS...: plumb apply with the emulator's kubeconfig; $AP_TMP/out, err; $RC
  set +e
  "$TB" exec env HOME="$AP_TMP/home" KUBECONFIG="$KD/kubeconfig" PLUMB_JOURNAL="$JOURNAL" \
    "$PLUMB" apply --repo "$REPO" --poll-max-ms 1000 --reboot-timeout 120 "$@" >"$AP_TMP/out" 2>"$AP_TMP/err"
  RC=$?
  set -e
}
annotation() { # NODE KEY: the node's annotation, "" if none
  kctl node "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"].get("annotations", {}).get(sys.argv[1], ""))' "$2"
}
unschedulable() { kctl node "$1" | python3 -c 'import json,sys; print(bool(json.load(sys.stdin)["spec"].get("unschedulable")))'; }
pod_there() { kctl pod "$1" >/dev/null 2>&1; }
evictions() { # POD STATUS: how many eviction POSTs of that pod got that status
  kctl audit | grep -cE "^POST /api/v1/namespaces/[^/]+/pods/$1/eviction[^ ]* $2" || true
}

# --- 1. A budget that forbids the eviction: n3 fails at the drain timeout, untouched.
set +e
"$TB" exec env HOME="$AP_TMP/home" KUBECONFIG="$KD/kubeconfig" PLUMB_JOURNAL="$JOURNAL" \
  "$PLUMB" plan --repo "$REPO" --ref HEAD >"$AP_TMP/plan" 2>&1
prc=$?
set -e
check "plan: all 4 nodes to change (exit $prc)" \
  bash -c "[[ $prc == 0 || $prc == 2 ]] && grep -q '^Plan: 4 node(s) to change' '$AP_TMP/plan'"
check "plan: n3 and n4 in a batch of the rollout 'k8s' (2 at once), n1 and n2 of 'rolling' (1)" \
  bash -c "grep -Eq ' n\[3-4\] .* rollout k8s\$' '$AP_TMP/plan' && grep -Eq ' n1 .* rollout rolling\$' '$AP_TMP/plan' && grep -Eq ' n2 .* rollout rolling\$' '$AP_TMP/plan'"
kapply --ref HEAD --auto-approve --limit n3
run1=$(sed -n 's/^run \([0-9a-f-]*\): .*/\1/p' "$AP_TMP/out" | head -1)
check "apply --limit n3 with the budget in force: failed (exit $RC)" test "$RC" = 1
check "n3 failed at wait-drained: drain timeout naming the trainer pod" \
  grep -Eq "n3 .*wait-drained.*drain timeout after 40s, still running: ml/trainer-7f9c-a" "$AP_TMP/out"
check "the eviction was refused by the budget and retried (429 x $(evictions trainer-7f9c-a 429))" \
  test "$(evictions trainer-7f9c-a 429)" -ge 3
check "nothing installed on n3" test "$(count_events n3 'apt-get install')" = 0
check "the trainer pod still runs" pod_there ml/trainer-7f9c-a
check "n3 stays cordoned" test "$(unschedulable n3)" = True
check "n3's plumb.dev/drain-reason names the run and the failure" \
  bash -c "[[ '$(annotation n3 plumb.dev/drain-reason)' == plumb:$run1:failed:wait-drained* ]]"
check "n4 (the admin's cordon) untouched" \
  test "$(annotation n4 plumb.dev/drain-reason)/$(unschedulable n4)" = /True

# --- 2. Retry: refused until the budget is relaxed, then evicted, converged, uncordoned.
before=$(evictions trainer-7f9c-a 429)
set +e
"$TB" exec env HOME="$AP_TMP/home" KUBECONFIG="$KD/kubeconfig" PLUMB_JOURNAL="$JOURNAL" \
  "$PLUMB" apply --repo "$REPO" --poll-max-ms 1000 --reboot-timeout 120 --retry-failed "$run1" \
  --auto-approve >"$AP_TMP/out" 2>"$AP_TMP/err" &
pid=$!
set -e
for _ in $(seq 1 600); do (($(evictions trainer-7f9c-a 429) > before)) && break; sleep 0.1; done
check "the retry's eviction is refused while the budget holds" test "$(evictions trainer-7f9c-a 429)" -gt "$before"
kctl pdb-add ml/trainer --selector app=trainer --min-available 0 >/dev/null
set +e; wait "$pid"; RC=$?; set -e
check "apply --retry-failed finishes once the budget allows (exit $RC)" test "$RC" = 0
check "the eviction went through (201)" test "$(evictions trainer-7f9c-a 201)" -ge 1
gone=yes; if pod_there ml/trainer-7f9c-a; then gone=no; fi
check "the trainer pod is gone (after its 2 s grace period)" test "$gone" = yes
check "the DaemonSet pod on n3 stays" pod_there monitoring/dcgm-exporter-n3
check "n3 converged" test "$(driver_of n3)" = 550.90.07
check "n3 uncordoned" test "$(unschedulable n3)" = False
check "n3's drain-reason and claim annotations removed" \
  test "$(annotation n3 plumb.dev/drain-reason)$(annotation n3 plumb.dev/claim)" = ""
check "n3: installed once, rebooted once" \
  test "$(count_events n3 'apt-get install nvidia-driver-550')$(count_events n3 'reboot requested')" = 11

# --- 3. The mixed rollout: Slurm and Kubernetes nodes in one run, each by its own policy.
kubectl_in label node n4 team=ml >/dev/null   # an admin's label: plumb must keep it
kctl audit --clear >/dev/null
kapply --ref HEAD --auto-approve
check "the mixed apply finished (exit $RC)" test "$RC" = 0
for n in n1 n2 n4; do
  check "$n converged" test "$(driver_of $n)" = 550.90.07
  check "$n: installed once, rebooted once" \
    test "$(count_events $n 'apt-get install nvidia-driver-550')$(count_events $n 'reboot requested')" = 11
done
check "n3 was in sync: not installed again" test "$(count_events n3 'apt-get install nvidia-driver-550')" = 1
check "n1, n2 drained and resumed in Slurm: idle" test "$(state_of n1)$(state_of n2)" = idleidle
check "Slurm never saw n3 or n4 drained by plumb" \
  bash -c "! '$TB' exec sinfo -h -N -o '%N %E' | grep -E '^n[34] plumb:'"
check "n4 keeps the admin's cordon" test "$(unschedulable n4)" = True
check "n4 has no plumb annotation left" \
  test "$(annotation n4 plumb.dev/drain-reason)$(annotation n4 plumb.dev/claim)" = ""
kctl audit >"$AP_TMP/audit"
stay=no; if pod_there monitoring/dcgm-exporter-n4 && pod_there kube-system/node-agent-n4; then stay=yes; fi
check "n4's DaemonSet and mirror pods stay" test "$stay" = yes
check "... and nothing on n4 was evicted" bash -c "! grep -q -- '-n4/eviction' '$AP_TMP/audit'"
check "the Kubernetes nodes were read through the API (kubectl get nodes)" grep -q '^GET /api/v1/nodes' "$AP_TMP/audit"
check "no VIOLATION" test "$(violations)" = 0
label() { # NODE KEY: the node's label, "" if none
  kctl node "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"].get("labels", {}).get(sys.argv[1], ""))' "$2"
}
sha12=$(git -C "$REPO" rev-parse HEAD | cut -c1-12)
for n in n3 n4; do
  check "$n shows its stack in labels ($(label $n plumb.dev/stack)@$(label $n plumb.dev/commit))" \
    test "$(label $n plumb.dev/stack)@$(label $n plumb.dev/commit)" = "gpu-2025q4@$sha12"
done
check "n4 keeps the admin's label team=ml" test "$(label n4 team)" = ml
for n in n1 n2; do
  check "$n shows its stack in Slurm features" \
    bash -c "[[ ,\$($TB exec sinfo -h -N -n $n -o %f), == *,stack_gpu-2025q4,*stack_commit_$sha12,* ]]"
done
if ((AP_FAIL > 0)); then
  echo "--- plan:"; tail -30 "$AP_TMP/plan"
  echo "--- emulator audit (last 30):"; kctl audit | tail -30
fi
ap_finish
