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
