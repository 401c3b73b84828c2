# shellcheck shell=bash
# Shared by tests/integration/gather_*.sh: a fresh testbed per test, `plumb gather` run inside
# its network namespace, and check/report helpers. Sourced, never run.
set -euo pipefail
: "${PLUMB:?set PLUMB to the plumb binary}" "${PLUMB_SRC:?set PLUMB_SRC to the source root}"
TB=${PLUMB_TB:-$PLUMB_SRC/tests/testbed/tb}
GT_PASS=0
GT_FAIL=0

check() { # DESCRIPTION CMD... : runs CMD, records pass/fail
  local desc=$1
  shift
  if "$@"; then
    echo "ok   $desc"
    GT_PASS=$((GT_PASS + 1))
  else
    echo "FAIL $desc"
    GT_FAIL=$((GT_FAIL + 1))
  fi
}

gt_finish() {
  echo "$GT_PASS passed, $GT_FAIL failed"
  ((GT_FAIL == 0))
}

gt_down() {
  [[ -n ${TB_RUN:-} && -d ${TB_RUN:-} ]] || return 0
  "$TB" down >/dev/null 2>&1 || true
  rm -rf "$GT_TMP"
}

# gt_up N: testbed of N nodes and a committed cluster repo for it at $REPO.
gt_up() {
  GT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/plumb-it.XXXXXX")
  export TB_RUN=$GT_TMP/$(basename "$GT_TMP")   # its netns is named after it: unique
  trap gt_down EXIT
  "$TB" up "$1" >/dev/null
  REPO=$GT_TMP/repo
  "$TB" cluster-repo "$REPO" >/dev/null
}

# Commit whatever the test changed in the cluster repo (plumb reads it at a ref).
gt_commit() {
  git -C "$REPO" -c user.name=test -c user.email=test@example.invalid commit -qam "${1:-test}"
}

# gather ARGS...: plumb gather against the testbed; stdout -> $OUT, stderr -> $ERR, rc -> $RC.
gather() {
  OUT=$GT_TMP/out ERR=$GT_TMP/err
  set +e
  "$TB" exec "$PLUMB" gather --repo "$REPO" "$@" >"$OUT" 2>"$ERR"
  RC=$?
  set -e
}

# jq-less JSON probe: py EXPR evaluates EXPR with j = the JSON in $OUT; exit 0 when truthy.
py() {
  python3 - "$OUT" "$1" "$ERR" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except ValueError:
    print("     (stdout is not JSON; stderr: %s)" % open(sys.argv[3]).read()[:500].strip())
    sys.exit(1)
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

contains() { grep -qF -- "$2" "$1"; }
