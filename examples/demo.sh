#!/usr/bin/env bash
# make demo: the whole story on an example cluster. Grows with each feature.
# Idempotent: everything happens in a fresh temporary directory, removed on exit.
set -euo pipefail
plumb=$(realpath "${1:-build/plumb}")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/e2e/lib.sh"
make_tmp
pod=$E2E_TMP/pod-a

if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }

step "1. The cluster repo: examples/h100-pod as a git repository (tags: baseline, upgrade)"
make_cluster_repo "$here/h100-pod" "$pod"
git -C "$pod" log --oneline --decorate | sed 's/^/   /'

step "plumb validate --ref baseline   (schemas, references, pin coherence; read from git, no checkout)"
"$plumb" validate --repo "$pod" --ref baseline

step "plumb validate --ref upgrade   (driver 550 -> 560, CUDA 12.4 -> 12.6 for h100-train)"
"$plumb" validate --repo "$pod" --ref upgrade

step "plumb show gpu001 --ref upgrade   (merged desired state, origin of every value)"
"$plumb" show gpu001 --repo "$pod" --ref upgrade

step "A mistake is caught before anything runs: CUDA 12.6 pinned on the R535 inference stack"
sed -i 's/cuda: 12.2.2/cuda: 12.6.2/' "$pod/stacks/h100-infer-2025q3.yaml"
"$plumb" validate --repo "$pod" --working-tree || echo "   (exit $? - nothing was changed)"

# ---- Stage 2 (apply): a live 8-node testbed with real sshd and Slurm ------------------------
# Needs root and the testbed's packages (scripts/install-deps.sh); skipped otherwise.
tb=$here/../tests/testbed/tb
if [[ $(id -u) != 0 ]] || ! command -v slurmctld >/dev/null || ! [[ -x /usr/sbin/sshd ]]; then
  step "2. (skipped: the live testbed stage needs root, sshd and Slurm; see scripts/install-deps.sh)"
  exit 0
fi
chmod 755 "$E2E_TMP"   # munged wants every directory above its socket searchable
export TB_RUN=$E2E_TMP/tb TB_NETNS=tb-demo-$$
live=$E2E_TMP/live
trap '"$tb" down >/dev/null 2>&1 || true' EXIT
run() { printf '   $ %s\n' "$*"; "$tb" exec env PLUMB_JOURNAL="$E2E_TMP/journal.db" "$@"; }

step "2. A live cluster: 8 testbed nodes (real sshd each, real slurmctld + slurmd), driver 535"
"$tb" up 8 --slurm >/dev/null
mkdir -p "$E2E_TMP/stacks"
cat >"$E2E_TMP/stacks/gpu-2025q3.yaml" <<'YAML'
# what the nodes run today
nvidia: { driver: 535.161.08, cuda: 12.2.2, nccl: 2.19.3-1+cuda12.2 }
YAML
cat >"$E2E_TMP/rolling.yaml" <<'YAML'
drain: { scheduler: slurm, timeout: 30m }
max_unavailable: 25%
canary: 1
max_failures: 1
health: [ "nvidia-smi -L" ]
YAML
"$tb" cluster-repo "$live" --stack "$E2E_TMP/stacks/gpu-2025q3.yaml" --rollout "$E2E_TMP/rolling.yaml" >/dev/null
for i in $(seq 1 8); do "$tb" state "n$i" check_drained=1 >/dev/null; done
run "$plumb" validate --repo "$live"
run "$plumb" gather --repo "$live" | tail -3

step "The upgrade, as a reviewed commit: driver 550, CUDA 12.4, NCCL 2.21 for group gpu"
cat >"$live/stacks/gpu-2025q3.yaml" <<'YAML'
# driver R550 for the whole pod (INC-4711)
nvidia: { driver: 550.90.07, cuda: 12.4.1, nccl: 2.21.5-1+cuda12.4 }
YAML
git -C "$live" -c user.name=alice -c user.email=alice@example.invalid commit -qam "gpu: driver 550, CUDA 12.4, NCCL 2.21"
git -C "$live" log --oneline | sed 's/^/   /'
run "$plumb" plan --repo "$live" --out "$E2E_TMP/plan.json" || true

step "A training job runs on n2 while the rollout starts: its drain waits for it"
jid=$("$tb" exec sbatch --parsable -w n2 --chdir=/tmp -o /dev/null -J train-llm --wrap "sleep 10")
until [[ $("$tb" exec squeue -h -j "$jid" -o %T) == RUNNING ]]; do sleep 0.2; done
"$tb" exec squeue | sed 's/^/   /'
run "$plumb" apply "$E2E_TMP/plan.json" --repo "$live" --poll-max-ms 1000 --auto-approve
echo "   changes made while a job ran (testbed VIOLATION log): $(cat "$TB_RUN"/nodes/*/state/events.log | grep -c VIOLATION || true)"
run "$plumb" runs
run "$plumb" history n2 | tail -12

step "Drift after the rollout: clean"
run "$plumb" drift --repo "$live" && echo "   (exit 0: in sync)"

step "Someone changes n4 by hand (NCCL back to 2.19) - drift catches it"
"$tb" ssh n4 apt-get install -y --allow-downgrades libnccl2=2.19.3-1+cuda12.2 >/dev/null
run "$plumb" drift --repo "$live" || echo "   (exit $?: drift found)"
