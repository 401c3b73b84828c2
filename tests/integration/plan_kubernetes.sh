#!/usr/bin/env bash
# plumb plan over a mixed inventory, reading both schedulers as apply will: n1 in Slurm (rollout
# "rolling"), n2, n3, n4 in Kubernetes (rollout "k8s", two out at a time) through the real kubectl
# against the testbed's API emulator (tests/testbed/kube).
#   - n4, cordoned by an admin: shown drained by an admin and counted as already out, so the
#     k8s batches take one node at a time besides it (uncounted, n2 and n3 would go together);
#   - n3's trainer pod, whose PodDisruptionBudget allows no disruption: listed as blocking n3's
#     drain with the budget named; its DaemonSet pod is not listed;
#   - n2, which Kubernetes does not know (Slurm does): a warning naming it, as apply would fail
#     its drain;
#   - a job on n1 still listed: the Slurm pool is read in the same plan;
#   - the same in the plan file; and the plan only read: the emulator saw GETs only, Slurm kept
#     its state, no node was touched.
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
max_failures: 0"
KE=$PLUMB_SRC/tests/testbed/kube/kubeemu
KD=$AP_TMP/kube
mkdir -p "$AP_TMP/home"
kube_down() { "$TB" exec "$KE" down "$KD" >/dev/null 2>&1 || true; ap_down; }
trap kube_down EXIT
"$TB" exec "$KE" up "$KD" >/dev/null || { echo "FAIL kubeemu up:"; tail -20 "$KD/emulator.log"; exit 1; }
kctl() { "$TB" exec "$KE" ctl "$KD" "$@"; }
kubectl_in() { "$TB" exec env HOME="$AP_TMP/home" KUBECONFIG="$KD/kubeconfig" kubectl "$@"; }
for n in n3 n4; do kctl node-add "$n" >/dev/null; done   # n2 is not a Kubernetes node
kctl pod-add ml/trainer-7f9c-a --node n3 --label app=trainer >/dev/null
kctl pod-add monitoring/dcgm-exporter-n3 --node n3 --owner DaemonSet/dcgm-exporter >/dev/null
kctl pdb-add ml/trainer --selector app=trainer --min-available 1 >/dev/null
kubectl_in cordon n4 >/dev/null   # an admin's cordon
unschedulable() { kctl node "$1" | python3 -c 'import json,sys; print(bool(json.load(sys.stdin)["spec"].get("unschedulable")))'; }
jid=$(job_on n1 300)
check "a job runs on n1 before the plan" test "$(slurm squeue -h -j "$jid" -o %T)" = RUNNING
slurm_before=$(slurm sinfo -h -N -o '%N %T %E' | sort)

cat >"$REPO/rollouts/k8s.yaml" <<'EOF'
drain: { scheduler: kubernetes, timeout: 40s }
max_unavailable: 2
canary: 0
max_failures: 0
EOF
python3 - "$REPO/inventory.yaml" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r"(name: n[234],.*groups: )\[gpu\]", r"\1[k8s]", s)
s = re.sub(r"^(  gpu: \{ (.*) \})$", r"\1\n  k8s: { stack: gpu-2025q4, rollout: k8s }", s, flags=re.M)
open(p, "w").write(s)
PY
git -C "$REPO" add -A && git -C "$REPO" -c user.name=t -c user.email=t@example.invalid commit -qm "n2-n4 in Kubernetes"
kctl audit --clear >/dev/null

set +e
"$TB" exec env HOME="$AP_TMP/home" KUBECONFIG="$KD/kubeconfig" \
  "$PLUMB" plan --repo "$REPO" --ref HEAD --detailed-exitcode --out "$AP_TMP/plan.json" \
  >"$AP_TMP/out" 2>"$AP_TMP/err"
RC=$?
set -e
check "plan with changes exits 2 (rc=$RC)" test "$RC" = 2
check "no 'scheduler state not read': Slurm and Kubernetes both answered" \
  bash -c "! grep -q 'scheduler state not read' '$AP_TMP/out' '$AP_TMP/err'"
check "n3's trainer pod blocks its drain, its budget named" \
  grep -qx "  n3: ml/trainer-7f9c-a (PodDisruptionBudget ml/trainer allows no eviction now)" "$AP_TMP/out"
check "the DaemonSet pod is no blocker" bash -c "! grep -q dcgm-exporter '$AP_TMP/out'"
check "n1's Slurm job blocks its drain" grep -qE "^  n1: $jid \(" "$AP_TMP/out"
check "n4 (the admin's cordon) is shown drained by an admin" \
  grep -q "^Drained by an admin (plumb will leave them drained): n4" "$AP_TMP/out"
check "n2, unknown to Kubernetes, is named" \
  grep -q "1 node(s) are not known to the scheduler their rollout policy drains through (kubernetes: n2): apply would fail them at the drain" "$AP_TMP/out" "$AP_TMP/err"
check "plan file: n4 admin-drained and already unavailable, no other node" pyj "$AP_TMP/plan.json" \
  "[(n['node'], n['admin_drained'], n['already_unavailable']) for n in j['nodes'] if n['admin_drained'] or n['already_unavailable']] == [('n4', True, True)]"
check "plan file: the blocking pod and the Slurm job" pyj "$AP_TMP/plan.json" \
  "[b['node'] for b in j['blocking_jobs']] == ['n1', 'n3'] and j['blocking_jobs'][1]['jobs'] == ['ml/trainer-7f9c-a (PodDisruptionBudget ml/trainer allows no eviction now)']"
check "plan file: the k8s batches take one node besides n4 at a time (n4 counted out)" pyj "$AP_TMP/plan.json" \
  "all(len([x for x in b['nodes'] if x != 'n4']) <= 1 for b in j['batches'] if b['rollout'] == 'k8s') and sorted(x for b in j['batches'] if b['rollout'] == 'k8s' for x in b['nodes']) == ['n2', 'n3', 'n4']"
check "peak nodes out counts n4: 2 (n4 + one at a time)" grep -q "^Peak nodes out at once: 2 " "$AP_TMP/out"

kctl audit >"$AP_TMP/audit"
check "Kubernetes was read: nodes, pods, budgets" \
  bash -c "grep -q '^GET /api/v1/nodes' '$AP_TMP/audit' && grep -q '^GET /api/v1/pods' '$AP_TMP/audit' && grep -q '^GET /apis/policy/v[1a-z0-9]*/poddisruptionbudgets' '$AP_TMP/audit'"
check "... and only read (every API request a GET)" bash -c "! grep -v '^GET ' '$AP_TMP/audit'"
check "n4 still cordoned, n3 not" test "$(unschedulable n4)/$(unschedulable n3)" = True/False
trainer=gone; if kctl pod ml/trainer-7f9c-a >/dev/null 2>&1; then trainer=there; fi
check "the trainer pod is still there" test "$trainer" = there
check "Slurm unchanged (states and reasons as before)" \
  test "$(slurm sinfo -h -N -o '%N %T %E' | sort)" = "$slurm_before"
check "the job still runs" test "$(slurm squeue -h -j "$jid" -o %T)" = RUNNING
check "no node was touched (no install, no reboot in events.log)" \
  test "$(cat "$TB_RUN"/nodes/*/state/events.log | grep -cE 'apt-get install|reboot requested' || true)" = 0
if ((AP_FAIL > 0)); then
  echo "--- plan:"; cat "$AP_TMP/out"; tail -20 "$AP_TMP/err"
  echo "--- emulator audit (last 30):"; tail -30 "$AP_TMP/audit"
fi
slurm scancel "$jid" || true
ap_finish
