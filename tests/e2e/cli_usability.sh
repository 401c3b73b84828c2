#!/usr/bin/env bash
# The CLI as a new user meets it: a mistyped verb, a run from a subdirectory of the cluster repo,
# a bad --ref, every verb's --help ending with examples, one meaning of --limit.
set -uo pipefail
: "${PLUMB:?path to the plumb binary}" "${PLUMB_SRC:?source root}"
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
pod=$E2E_TMP/pod
make_cluster_repo "$PLUMB_SRC/examples/h100-pod" "$pod"

echo "# a mistyped verb"
expect_rc 1 "plumb pln" -- "$PLUMB" pln
expect_grep "unknown command 'pln'" "$E2E_ERR" "names the word it did not know"
expect_grep "did you mean 'plumb plan'\?" "$E2E_ERR" "suggests plan"
expect_rc 1 "plumb drfit --repo X" -- "$PLUMB" drfit --repo X
expect_grep "did you mean 'plumb drift'\?" "$E2E_ERR" "suggests drift"
expect_rc 1 "a word like no verb" -- "$PLUMB" frobnicate
expect_no_grep "did you mean" "$E2E_ERR" "no far-fetched suggestion"
expect_grep "plumb --help lists the commands" "$E2E_ERR" "points at --help"

echo "# from a subdirectory of the cluster repo, as git does"
mkdir -p "$pod/stacks/deep/er"
expect_rc 0 "validate from stacks/deep/er" -- bash -c "cd '$pod/stacks/deep/er' && '$PLUMB' validate"
expect_grep "^valid: cluster pod-a" "$E2E_OUT" "the repo found upwards"
expect_rc 0 "show from a subdirectory" -- bash -c "cd '$pod/stacks' && '$PLUMB' show gpu001"
expect_grep "^node gpu001 " "$E2E_OUT" "show reads the same repo"
mkdir -p "$E2E_TMP/plain/sub"
expect_rc 1 "outside any repository" -- bash -c "cd '$E2E_TMP/plain/sub' && '$PLUMB' validate"
expect_grep "is not a git repository" "$E2E_ERR" "still says there is no repository"
expect_rc 1 "an explicit --repo is taken as given" -- bash -c "cd '$pod' && '$PLUMB' validate --repo stacks"
expect_grep "stacks is not a git repository" "$E2E_ERR" "no search above an explicit --repo"

echo "# a bad --ref: cannot read, not 'invalid'"
expect_rc 1 "show with an unknown ref" -- "$PLUMB" show gpu001 --repo "$pod" --ref no-such-ref
expect_grep "unknown ref 'no-such-ref'" "$E2E_ERR" "the ref is named"
expect_grep "cannot read the cluster repo .* at no-such-ref" "$E2E_ERR" "the summary says it could not be read"
expect_no_grep "invalid" "$E2E_ERR" "and not that the repo is invalid"
expect_rc 1 "plan with an unknown ref" -- "$PLUMB" plan --repo "$pod" --ref no-such-ref
expect_grep "cannot read the cluster repo .* at no-such-ref" "$E2E_ERR" "plan says the same"
broken=$E2E_TMP/broken
make_cluster_repo "$PLUMB_SRC/examples/h100-pod" "$broken"
printf 'nvidia:\n  driver: [not, a, version]\n' >>"$broken/stacks/h100-train-2025q4.yaml"
git -C "$broken" commit -qam "break the stack"
expect_rc 1 "show on an invalid repo" -- "$PLUMB" show gpu001 --repo "$broken"
expect_grep "the cluster repo .* at HEAD is invalid \([0-9]+ errors?\)" "$E2E_ERR" "an invalid repo is called invalid"
expect_grep "plumb validate. lists every file:line" "$E2E_ERR" "with the way to every error"

echo "# help that teaches"
verbs=$("$PLUMB" --help | awk '/^SUBCOMMANDS:|^Subcommands:/ {on=1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on=0}')
[[ -n $verbs ]] && pass "plumb --help lists verbs: $(echo $verbs)" || fail "no verbs in plumb --help"
for v in $verbs; do
  "$PLUMB" $v --help >"$E2E_OUT" 2>&1
  expect_grep "^Examples:" "$E2E_OUT" "plumb $v --help has examples"
  expect_no_grep "\{(true|false)\}" "$E2E_OUT" "plumb $v --help prints no raw flag defaults"
done
"$PLUMB" watch --help >"$E2E_OUT"
expect_grep "^  --fanout INT=16 " "$E2E_OUT" "watch reads 16 nodes at once by default (worker threads: memory)"
"$PLUMB" drift --help >"$E2E_OUT"
expect_no_grep "validate/plan only" "$E2E_OUT" "drift's --working-tree text is about drift too"

echo "# --limit takes node patterns everywhere"
for v in runs history; do
  expect_rc 1 "$v --limit 5" -- "$PLUMB" $v --limit 5 --journal "$E2E_TMP/j.db"
  expect_grep "hint: plumb $v --last 5" "$E2E_ERR" "$v points at --last"
  expect_rc 0 "$v --last 5" -- "$PLUMB" $v --last 5 --journal "$E2E_TMP/j.db"
done
expect_rc 1 "history --limit gpu001 (a node, not a count)" -- "$PLUMB" history --limit gpu001 --journal "$E2E_TMP/j.db"
expect_grep "hint: plumb history gpu001 " "$E2E_ERR" "... points at the node argument"
expect_no_grep "--last gpu001" "$E2E_ERR" "... not at --last"
expect_rc 1 "runs --limit 'gpu00[1-4]'" -- "$PLUMB" runs --limit 'gpu00[1-4]' --journal "$E2E_TMP/j.db"
expect_grep "hint: plumb history NODE" "$E2E_ERR" "... points at history for a node"
expect_rc 0 "bmc plan --help" -- "$PLUMB" bmc plan --help
expect_grep "^  --limit" "$E2E_OUT" "bmc takes --limit"

echo "# plumb version: what a bug report needs"
expect_rc 0 "plumb version" -- "$PLUMB" version
expect_grep "^plumb [0-9]+\.[0-9]+\.[0-9]+$" "$E2E_OUT" "the version"
expect_grep "^commit +([0-9a-f]{40}(-dirty)?|unknown)$" "$E2E_OUT" "the commit it was built from"
expect_grep "^allocator +(mimalloc [0-9.]+|system malloc)$" "$E2E_OUT" "the allocator"
for lib in libssh libcurl OpenSSL libgit2; do
  expect_grep "^$lib +[^ ]*[0-9]" "$E2E_OUT" "the $lib it runs with"
done
if git -C "$PLUMB_SRC" rev-parse HEAD >/dev/null 2>&1; then
  head=$(git -C "$PLUMB_SRC" rev-parse HEAD)
  expect_grep "^commit +$head" "$E2E_OUT" "the commit is this checkout's HEAD"
fi
expect_rc 0 "plumb version --format json" -- "$PLUMB" version --format json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["version"] and d["commit"] and set(d["libraries"]) == {"libssh","libcurl","OpenSSL","libgit2"}, d' "$E2E_OUT" \
  && pass "json: version, commit, libraries" || fail "version json"

finish
