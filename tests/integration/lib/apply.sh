# shellcheck shell=bash
# Shared by tests/integration/apply_*.sh: a testbed with Slurm, a cluster repo holding the
# driver+CUDA+NCCL upgrade stack and a rollout policy, and helpers to run plumb apply and to
# read Slurm and the nodes' events.log. Sourced, never run.
set -euo pipefail
: "${PLUMB:?set PLUMB to the plumb binary}" "${PLUMB_SRC:?set PLUMB_SRC to the source root}"
TB=${PLUMB_TB:-$PLUMB_SRC/tests/testbed/tb}
AP_DATA=$PLUMB_SRC/tests/integration/data/apply
AP_PASS=0
AP_FAIL=0

check() { # DESCRIPTION CMD...
  local desc=$1
  shift
  if "$@"; then
    echo "ok   $desc"
    AP_PASS=$((AP_PASS + 1))
  else
    echo "FAIL $desc"
    AP_FAIL=$((AP_FAIL + 1))
  fi
}

ap_finish() {
  echo "$AP_PASS passed, $AP_FAIL failed"
  ((AP_FAIL == 0))
}

ap_down() {
  [[ -n ${TB_RUN:-} && -d ${TB_RUN:-} ]] || return 0
  [[ -z ${AP_SAMPLER:-} ]] || kill "$AP_SAMPLER" 2>/dev/null || true
  if ((AP_FAIL > 0)) && [[ -n ${AP_TMP:-} ]]; then
    echo "--- last plumb output:"; tail -40 "$AP_TMP/out" 2>/dev/null || true
    tail -20 "$AP_TMP/err" 2>/dev/null || true
  fi
  "$TB" down >/dev/null 2>&1 || true
  rm -rf "$AP_TMP"
}

# ap_up N ROLLOUT_YAML_TEXT: testbed of N nodes with Slurm; cluster repo at $REPO with the
# upgrade stack and a rollout "rolling" from the given YAML text; check_drained=1 everywhere.
ap_up() {
  local n=$1 rollout=$2
  AP_TMP=$(mktemp -d "${TMPDIR:-/tmp}/plumb-ap.XXXXXX")
  chmod 755 "$AP_TMP"   # munged wants every directory above its socket searchable
  export TB_RUN=$AP_TMP/tb TB_NETNS=tb-${AP_TMP##*.}
  trap ap_down EXIT
  "$TB" up "$n" --slurm >/dev/null
  printf '%s\n' "$rollout" >"$AP_TMP/rolling.yaml"
  REPO=$AP_TMP/repo
  "$TB" cluster-repo "$REPO" --stack "$AP_DATA/gpu-2025q4.yaml" --rollout "$AP_TMP/rolling.yaml" >/dev/null
  JOURNAL=$AP_TMP/journal.db
  for i in $(seq 1 "$n"); do "$TB" state "n$i" check_drained=1 >/dev/null; done
}

# apply ARGS...: plumb apply in the testbed; stdout -> $AP_TMP/out, stderr -> $AP_TMP/err, $RC.
apply() {
  set +e
  "$TB" exec env PLUMB_JOURNAL="$JOURNAL" "$PLUMB" apply --repo "$REPO" "$@" \
    >"$AP_TMP/out" 2>"$AP_TMP/err"
  RC=$?
  set -e
}

plumb_in() { "$TB" exec env PLUMB_JOURNAL="$JOURNAL" "$PLUMB" "$@"; }
slurm() { "$TB" exec "$@"; }
events() { cat "$TB_RUN/nodes/$1/state/events.log"; }
count_events() { grep -c -- "$2" "$TB_RUN/nodes/$1/state/events.log" || true; }
violations() { cat "$TB_RUN"/nodes/*/state/events.log | grep -c VIOLATION || true; }
driver_of() { "$TB" ssh "$1" nvidia-smi --query-gpu=driver_version --format=csv,noheader | sort -u; }
state_of() { slurm sinfo -h -N -n "$1" -o %T; }
reason_of() { slurm sinfo -h -N -n "$1" -o %E; }

# Submits a job pinned to NODE running SECONDS, and waits until it RUNS (a pending job would
# let the node drain at once: testbed gotcha 9).
job_on() {
  local node=$1 secs=$2 jid
  jid=$(slurm sbatch --parsable -w "$node" --chdir=/tmp -o /dev/null --wrap "sleep $secs")
  for _ in $(seq 1 100); do
    [[ $(slurm squeue -h -j "$jid" -o %T) == RUNNING ]] && break
    sleep 0.2
  done
  echo "$jid"
}

# Samples Slurm every 0.25 s in the background: the most nodes unavailable at once
# (drain/drained/draining/down/not responding) goes to $AP_TMP/max_out.
sampler_start() {
  echo 0 >"$AP_TMP/max_out"
  # One loop inside the testbed's netns (tb exec replaces itself with it, so $! is the loop):
  # a `tb exec` per sample cost ~10 processes, 4 times a second, for the whole apply.
  # shellcheck disable=SC2016  # expanded by the loop's shell
  "$TB" exec bash -c 'max=0
    while :; do
      n=$(sinfo -h -N -o %T 2>/dev/null | grep -Ec "drain|down|\*|fail|maint|reboot" || true)
      if ((n > max)); then max=$n; echo "$max" >"$1"; fi
      sleep 0.25
    done' sampler "$AP_TMP/max_out" &
  AP_SAMPLER=$!
}
sampler_stop() { kill "$AP_SAMPLER" 2>/dev/null || true; wait "$AP_SAMPLER" 2>/dev/null || true; AP_SAMPLER=; cat "$AP_TMP/max_out"; }

# jq-less JSON probe on a file: pyj FILE EXPR (j = the JSON), exit 0 when truthy.
pyj() {
  python3 - "$1" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
