#!/usr/bin/env bash
# The scheduler is read again right before every step that changes a node, whoever drained it
# (issue 31). An admin drained n1 (Slurm) and cordoned n2 (Kubernetes); plumb apply changes
# each. The run is held (PLUMB_HOLD_AT, a test hook) right after its first change; meanwhile the
# admin returns the node to service and a job (a pod) starts there. Released, plumb must stop
# that node before its next install or reboot: nothing more is changed under the job, the node
# is not taken out again (the admin's decision), it is reported, and the run ends non-zero.
# Needs kubectl for the Kubernetes half (PLUMB_SKIP_KUBE=1 skips that half, saying so).
. "$(dirname "$0")/lib/apply.sh"
ap_up 2 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 2
canary: 0
max_failures: 0
health: [ \"nvidia-smi -L\" ]
health_timeout: 1m"

HOLD=$AP_TMP/hold
held_apply() { # OUT ENV... -- ARGS...: plumb apply held at its first change, in the background
  local out=$1
  shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  rm -f "$HOLD.held"
  touch "$HOLD"
  "$TB" exec env PLUMB_JOURNAL="$JOURNAL" PLUMB_TEST_HOOKS=1 PLUMB_HOLD_AT=apply.outcome:1 \
    PLUMB_HOLD_FILE="$HOLD" "${envs[@]}" "$PLUMB" apply --repo "$REPO" --auto-approve \
    --reboot-timeout 120 --poll-max-ms 500 "$@" >"$out" 2>"$out.err" &
  HELD_PID=$!
  # Waits for a state, not a time: the hold file appears once the first change is done.
  for _ in $(seq 1 3000); do
    [[ -e $HOLD.held ]] && return 0
    kill -0 "$HELD_PID" 2>/dev/null || break
    sleep 0.2
  done
  echo "plumb never reached its first change:"; tail -n 20 "$out" "$out.err"
  return 1
}
release() { # waits for the held run; its exit status in RC
  rm -f "$HOLD"
  set +e; wait "$HELD_PID"; RC=$?; set -e
}
changes_on() { grep -cE 'apt-get (install|unpack)|reboot requested|power cycle' "$TB_RUN/nodes/$1/state/events.log" || true; }

# --- Slurm: n1 ----------------------------------------------------------------------------
slurm scontrol update nodename=n1 state=drain reason="RMA gpu3"
held_apply "$AP_TMP/slurm" -- --limit n1
before=$(changes_on n1)
check "the run is held after n1's first change" test "$before" -ge 1
slurm scontrol update nodename=n1 state=resume
jid=$(job_on n1 900)
check "a job runs on n1 (back in service)" test "$(slurm squeue -h -j "$jid" -o %T)" = RUNNING
release
check "apply ends non-zero (rc=$RC)" test "$RC" = 1
check "nothing more changed on n1 after the admin returned it" test "$(changes_on n1)" = "$before"
check "no VIOLATION (no change while the job ran)" test "$(violations)" = 0
check "the job still runs (not killed, not requeued)" \
  test "$(slurm squeue -h -j "$jid" -o %T)" = RUNNING
check "n1 is not drained again: the admin's decision" \
  bash -c "! '$TB' exec sinfo -h -N -n n1 -o %T | grep -q drain"
check "the output names n1 and why it stopped" \
  grep -q "n1.*back in service before.*RMA gpu3" "$AP_TMP/slurm"
plumb_in runs --format json >"$AP_TMP/runs.json" 2>&1 || true
check "plumb runs records n1 failed" grep -q '"failed"' "$AP_TMP/runs.json"
slurm scancel "$jid" || true

# --- Kubernetes: n2 ----------------------------------------------------------------------
if ! command -v kubectl >/dev/null; then
  if [[ ${PLUMB_SKIP_KUBE:-} == 1 ]]; then
    echo "PARTIAL SKIP: the Kubernetes half: no kubectl (PLUMB_SKIP_KUBE=1)"
    ap_finish
    exit $?
  fi
  check "kubectl on PATH (scripts/install-deps.sh installs kubernetes-client)" false
  ap_finish
  exit 1
fi
KE=$PLUMB_SRC/tests/testbed/kube/kubeemu
KD=$AP_TMP/kube
mkdir -p "$AP_TMP/home"
kube_down() { "$TB" exec "$KE" down "$KD" >/dev/null 2>&1 || true; ap_down; }
trap kube_down EXIT
"$TB" exec "$KE" up "$KD" >/dev/null || { echo "FAIL kubeemu up:"; tail -20 "$KD/emulator.log"; exit 1; }
kctl() { "$TB" exec "$KE" ctl "$KD" "$@"; }
kubectl_in() { "$TB" exec env HOME="$AP_TMP/home" KUBECONFIG="$KD/kubeconfig" kubectl "$@"; }
kctl node-add n2 >/dev/null
cat >"$REPO/rollouts/k8s.yaml" <<'EOF'
drain: { scheduler: kubernetes, timeout: 10m }
max_unavailable: 1
canary: 0
max_failures: 0
health: [ "nvidia-smi -L" ]
health_timeout: 1m
EOF
python3 - "$REPO/inventory.yaml" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r"(name: n2,.*groups: )\[gpu\]", r"\1[k8s]", s)
s = re.sub(r"^(  gpu: \{ (.*) \})$", r"\1\n  k8s: { stack: gpu-2025q4, rollout: k8s }", s, flags=re.M)
open(p, "w").write(s)
PY
git -C "$REPO" add -A && git -C "$REPO" -c user.name=t -c user.email=t@example.invalid commit -qm "n2 in Kubernetes"
kubectl_in cordon n2 >/dev/null   # the admin's cordon
held_apply "$AP_TMP/kube-apply" HOME="$AP_TMP/home" KUBECONFIG="$KD/kubeconfig" -- --limit n2
before=$(changes_on n2)
check "the run is held after n2's first change" test "$before" -ge 1
kubectl_in uncordon n2 >/dev/null
kctl pod-add ml/trainer-n2 --node n2 --label app=trainer >/dev/null
release
check "apply ends non-zero (rc=$RC)" test "$RC" = 1
check "nothing more changed on n2 after the admin uncordoned it" test "$(changes_on n2)" = "$before"
check "the pod still runs on n2 (never evicted)" bash -c "'$TB' exec '$KE' ctl '$KD' pod ml/trainer-n2 >/dev/null 2>&1"
check "n2 is not cordoned again" \
  bash -c "[[ \$('$TB' exec '$KE' ctl '$KD' node n2 | python3 -c 'import json,sys; print(bool(json.load(sys.stdin)[\"spec\"].get(\"unschedulable\")))') == False ]]"
check "the output names n2 and why it stopped" grep -q "n2.*back in service before" "$AP_TMP/kube-apply"
ap_finish
