#!/usr/bin/env bash
# Helpers for the e2e scripts: source it (`. "$PLUMB_SRC/tests/e2e/lib.sh"`).
# Run directly (ctest registers every tests/e2e/*.sh), it checks its own helpers.

# Commits are made with a fixed identity and date so SHAs do not depend on the machine.
export GIT_AUTHOR_NAME=plumb-tests GIT_AUTHOR_EMAIL=tests@plumb.example
export GIT_COMMITTER_NAME=plumb-tests GIT_COMMITTER_EMAIL=tests@plumb.example
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

# make_cluster_repo SRC DEST: DEST becomes a git repository (branch main) holding the example
# SRC in two commits: "baseline" (SRC as it is) and "upgrade" (SRC with the files of
# SRC-upgrade/ laid over it, if that directory exists; otherwise an empty commit). Both are
# tagged. DEST must not exist or be empty.
make_cluster_repo() {
  local src=$1 dest=$2
  [[ -d "$src" ]] || { echo "make_cluster_repo: no such example: $src" >&2; return 1; }
  mkdir -p "$dest"
  cp -r "$src"/. "$dest"/
  git -C "$dest" init -q -b main
  git -C "$dest" add -A
  git -C "$dest" commit -q -m "baseline: $(basename "$src")"
  git -C "$dest" tag baseline
  if [[ -d "$src-upgrade" ]]; then
    cp -r "$src-upgrade"/. "$dest"/
    git -C "$dest" add -A
    git -C "$dest" commit -q -m "upgrade: $(basename "$src")-upgrade"
  else
    git -C "$dest" commit -q --allow-empty -m "upgrade: (no changes)"
  fi
  git -C "$dest" tag upgrade
}

# make_tmp: sets E2E_TMP to a private scratch directory, removed when the script exits, and
# E2E_OUT / E2E_ERR to files in it (call it in the script's own shell, not in $(...)).
make_tmp() {
  E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/plumb-e2e.XXXXXX")
  E2E_OUT=$E2E_TMP/.out E2E_ERR=$E2E_TMP/.err
  # shellcheck disable=SC2064
  trap "rm -rf '$E2E_TMP'" EXIT
}

# Test bookkeeping: check NAME COMMAND... runs COMMAND and records pass/fail.
E2E_FAILED=0
pass() { echo "ok   - $*"; }
fail() { echo "FAIL - $*"; E2E_FAILED=$((E2E_FAILED + 1)); }
# expect_rc WANT DESC -- CMD...: runs CMD, compares its exit status.
expect_rc() {
  local want=$1 desc=$2; shift 3
  local got=0
  "$@" >"$E2E_OUT" 2>"$E2E_ERR" || got=$?
  if [[ "$got" == "$want" ]]; then pass "$desc (exit $got)"; else
    fail "$desc: exit $got, wanted $want"; sed 's/^/    | /' "$E2E_OUT" "$E2E_ERR" | head -40; fi
}
# expect_grep PATTERN FILE DESC
expect_grep() {
  if grep -qE -- "$1" "$2"; then pass "$3"; else
    fail "$3: /$1/ not in $(basename "$2")"; sed 's/^/    | /' "$2" | head -40; fi
}
expect_no_grep() {
  if ! grep -qE -- "$1" "$2"; then pass "$3"; else fail "$3: /$1/ found"; grep -E -- "$1" "$2" | head; fi
}
finish() {
  if ((E2E_FAILED)); then echo "$E2E_FAILED check(s) failed"; exit 1; fi
  echo "all checks passed"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  # Self-check of make_cluster_repo on the h100-pod example.
  set -euo pipefail
  src=${PLUMB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
  make_tmp
  tmp=$E2E_TMP
  make_cluster_repo "$src/examples/h100-pod" "$tmp/pod"
  [[ $(git -C "$tmp/pod" rev-list --count HEAD) == 2 ]] && pass "two commits" || fail "two commits"
  git -C "$tmp/pod" rev-parse -q --verify baseline >/dev/null && pass "tag baseline" || fail "tag baseline"
  git -C "$tmp/pod" rev-parse -q --verify upgrade >/dev/null && pass "tag upgrade" || fail "tag upgrade"
  if git -C "$tmp/pod" diff --quiet baseline upgrade; then fail "upgrade changes files"; else
    pass "upgrade changes files"; fi
  expect_grep "driver: 560" "$tmp/pod/stacks/h100-train-2025q4.yaml" "working tree is at upgrade"
  [[ -z $(git -C "$tmp/pod" status --porcelain) ]] && pass "clean tree" || fail "clean tree"
  finish
fi
