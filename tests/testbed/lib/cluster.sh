# shellcheck shell=bash
# tb cluster-repo DEST [--stack FILE]... [--rollout FILE]... [--waivers FILE]:
# make DEST a git cluster repo for the running testbed: its inventory.yaml
# (nodes, ssh defaults pointing into $TB_RUN/client), the given stacks and
# rollouts (the group "gpu" gets the first of each), one commit. Sourced by tb.

tb_cluster_repo() {
  local dest="" stacks=() rollouts=() waivers=""
  while (($#)); do
    case $1 in
      --stack) stacks+=("${2:?--stack needs a file}"); shift ;;
      --rollout) rollouts+=("${2:?--rollout needs a file}"); shift ;;
      --waivers) waivers=${2:?--waivers needs a file}; shift ;;
      -*) tb_die "cluster-repo: unknown option '$1'" ;;
      *) dest=$1 ;;
    esac
    shift
  done
  [[ -n $dest ]] || tb_die "usage: tb cluster-repo DEST [--stack FILE]... [--rollout FILE]... [--waivers FILE]"
  tb_require_run
  [[ ! -e $dest/.git ]] || tb_die "cluster-repo: $dest is already a git repository"
  mkdir -p "$dest/stacks" "$dest/rollouts"
  local f stack="" rollout=""
  for f in "${stacks[@]}"; do
    [[ -f $f ]] || tb_die "cluster-repo: no stack file $f"
    cp "$f" "$dest/stacks/"
    [[ -n $stack ]] || stack=$(basename "$f" .yaml)
  done
  for f in "${rollouts[@]}"; do
    [[ -f $f ]] || tb_die "cluster-repo: no rollout file $f"
    cp "$f" "$dest/rollouts/"
    [[ -n $rollout ]] || rollout=$(basename "$f" .yaml)
  done
  [[ -z $waivers ]] || cp "$waivers" "$dest/waivers.yaml"
  local group="{}"
  if [[ -n $stack || -n $rollout ]]; then
    group="{ ${stack:+stack: $stack}${stack:+${rollout:+, }}${rollout:+rollout: $rollout} }"
  fi
  sed "s|^  gpu: {}\$|  gpu: $group|" "$TB_RUN/cluster/inventory.yaml" >"$dest/inventory.yaml"
  (
    cd "$dest"
    git init -q
    git add -A
    git -c user.name=testbed -c user.email=testbed@example.invalid commit -q -m "testbed cluster"
  ) || tb_die "cluster-repo: git failed in $dest"
  echo "$dest"
}
