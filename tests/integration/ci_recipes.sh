#!/usr/bin/env bash
# The CI recipes in examples/ci/ run end to end on the testbed (2 nodes, real Slurm), their
# own shell steps in order, with the variables each CI would set (lib/ci_recipe.py plays the
# runner; gh and curl are stubs answering from fixtures: no network). The cluster repo has a
# policy asking for signed commits; the pull/merge requests are signed by alice, the merges
# by the forge's key, with real ssh-keygen signatures.
#   GitHub: a pull request is validated and planned (artefact + comment), nothing is applied;
#     the merge (a merge commit) applies the reviewed plan at the merge commit, recording the
#     approver, the CI actor, the signer and both commits. The stack pins gpu_health and n2
#     has a failed check (uncorrected ECC errors on GPU 3): the plan and the comment show it
#     as a finding, not a change; n2 is skipped (unhealthy: skip, the default) and the rest is
#     applied, the reviewed plan accepted at the merge.
#   GitLab: n2 repaired, a merge request is planned the same way; the squash merge (another
#     commit, the same desired state) applies the reviewed plan.
#   An unsigned commit on main is refused before any node is touched.
. "$(dirname "$0")/lib/apply.sh"
command -v ssh-keygen >/dev/null || { echo "SKIP: ssh-keygen is not installed"; exit 77; }
ap_up 2 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 1
canary: 1
max_failures: 0"
RECIPE=$PLUMB_SRC/tests/integration/lib/ci_recipe.py
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=alice GIT_AUTHOR_EMAIL=alice@example.com
export GIT_COMMITTER_NAME=alice GIT_COMMITTER_EMAIL=alice@example.com

# The repo on the forge (ORIGIN), and a developer's clone (DEV). main starts at the baseline:
# what the testbed nodes run, so nothing to change.
cp "$PLUMB_SRC/tests/integration/data/plan/baseline.yaml" "$REPO/stacks/gpu-2025q4.yaml"
echo 'health: { gpu_health: { max_uncorrected_ecc: 0 } }' >>"$REPO/stacks/gpu-2025q4.yaml"
git -C "$REPO" add -A && git -C "$REPO" commit -q -m "baseline"
git -C "$REPO" branch -M main   # tb cluster-repo leaves git's default branch name
ORIGIN=$AP_TMP/origin.git DEV=$AP_TMP/dev
git clone -q --bare "$REPO" "$ORIGIN"
git clone -q "$ORIGIN" "$DEV"
export CI_TEST_ORIGIN=$ORIGIN
for k in alice forge mallory; do ssh-keygen -q -t ed25519 -N '' -C "$k" -f "$AP_TMP/$k"; done
signed() { # signed KEY GIT-ARGS...: a git command that signs with KEY's SSH key
  local key=$1; shift
  git -C "$DEV" -c gpg.format=ssh -c user.signingkey="$AP_TMP/$key" "$@"
}
{ echo "alice@example.com $(cut -d' ' -f1,2 "$AP_TMP/alice.pub")"
  echo "forge@example.com $(cut -d' ' -f1,2 "$AP_TMP/forge.pub")"; } >"$DEV/allowed_signers"
printf 'require_signed_commits: true\nallowed_signers: allowed_signers\n' >"$DEV/policy.yaml"
git -C "$DEV" add -A && git -C "$DEV" commit -q -m "policy: signed commits only"
git -C "$DEV" push -q origin main

# The CI runner's environment: plumb and the stubs on PATH, the test's journal.
BIN=$AP_TMP/bin STUB=$AP_TMP/stub ART=$AP_TMP/artefacts WORK=$AP_TMP/work
mkdir -p "$BIN" "$STUB" "$ART" "$WORK"
ln -s "$PLUMB" "$BIN/plumb"
cp "$PLUMB_SRC"/tests/integration/lib/ci_stub/{gh,curl} "$BIN/"
export CI_STUB=$STUB CI_ARTEFACTS=$ART
RUNNER_PATH=$BIN:$PATH
events_total() { cat "$TB_RUN"/nodes/*/state/events.log 2>/dev/null | wc -l; }
ci() { # ci github|gitlab RECIPE CONTEXT: runs the pipeline; output in $AP_TMP/out, rc in $RC
  local kind=$1 recipe=$2 ctx=$3 flag=--context
  [[ $kind == gitlab ]] && flag=--variables
  set +e
  PATH=$RUNNER_PATH python3 "$RECIPE" "$kind" "$recipe" "$flag" "$ctx" --workdir "$WORK" \
    --artefacts "$ART" --shell "$TB exec" >"$AP_TMP/out" 2>&1
  RC=$?
  set -e
  sed 's/^/    | /' "$AP_TMP/out" | tail -60
}
runs_json() { plumb_in runs --format json --journal "$JOURNAL" >"$AP_TMP/runs.json"; }

# ---- GitHub Actions ---------------------------------------------------------------------
GH=$PLUMB_SRC/examples/ci/github/plumb.yml
# n2's GPU 3 has uncorrected ECC errors: a failed gpu_health check on a node with a change.
"$TB" state n2 gpu_ecc_uncorrected_3=2 >/dev/null
n2_events() { count_events n2 .; }
git -C "$DEV" checkout -q -b pr-1
sed -i 's/datacenter-gpu-manager: "1:3.3.5"/datacenter-gpu-manager: "1:3.3.7"/' "$DEV/stacks/gpu-2025q4.yaml"
git -C "$DEV" add -A && signed alice commit -q -S -m "DCGM 3.3.7"
git -C "$DEV" push -q origin pr-1
PR_HEAD=$(git -C "$DEV" rev-parse HEAD)
MAIN_BEFORE=$(git -C "$DEV" rev-parse main)
events0=$(events_total)
cat >"$AP_TMP/gh-pr.json" <<EOF
{"github": {"event_name": "pull_request", "sha": "$PR_HEAD", "base_ref": "main", "ref": "refs/pull/1/merge",
  "repository": "org/pod-a", "run_id": 101, "actor": "alice", "token": "ghs_stub",
  "event": {"pull_request": {"number": 1, "head": {"sha": "$PR_HEAD"}}}},
 "runner_env": {"PLUMB_JOURNAL": "$JOURNAL", "PATH": "$RUNNER_PATH"}}
EOF
ci github "$GH" "$AP_TMP/gh-pr.json"
check "github PR: the pipeline passes (rc=$RC)" test "$RC" = 0
check "github PR: the plan job ran, the apply job did not" \
  bash -c "grep -q '^job plan$' $AP_TMP/out && grep -q '^job apply: skipped' $AP_TMP/out"
check "github PR: the plan file is the artefact" test -s "$ART/101/plumb-plan/plan.json"
check "github PR: the plan is the PR comment; n2's finding is no change, n2 is skipped" \
  grep -q "Plan: 1 node(s) to change (1 drain), 0 in sync, 0 unreadable; health: 1 node(s) unhealthy, 1 finding(s), 1 node(s) skipped" "$STUB/comment-1.md"
check "github PR: the comment's health section names n2, the check, GPU 3 and the value against its threshold" \
  grep -qF '| `n2` | fail | `gpu_health` | GPU uncorrected ECC errors | `GPU 3` | `2` | `max 0` |' "$STUB/comment-1.md"
check "github PR: the comment shows n2 skipped, never its finding as a change" \
  bash -c "grep -q 'skipped: unhealthy' '$STUB/comment-1.md' && ! grep -qF 'health.gpu_health' '$STUB/comment-1.md'"
check "github PR: the plan file holds the finding apart, n2 in no batch" pyj "$ART/101/plumb-plan/plan.json" \
  "j['health'][0]['node'] == 'n2' and j['health'][0]['findings'][0]['subject'] == 'GPU 3' and [n['node'] for n in j['nodes'] if n['skipped_unhealthy']] == ['n2'] and all('n2' not in b['nodes'] for b in j['batches'])"
check "github PR: the comment names the signer" grep -qF 'signed by ssh alice\@example.com' "$STUB/comment-1.md"
check "github PR: the comment shows the batches" grep -q "#### Batches" "$STUB/comment-1.md"
check "github PR: nothing changed on the nodes" test "$(events_total)" = "$events0"

# The merge: a merge commit signed by the forge's key, pushed to main.
git -C "$DEV" checkout -q main
GIT_COMMITTER_NAME=forge GIT_COMMITTER_EMAIL=forge@example.com \
  signed forge merge -q --no-ff -S -m "Merge pull request #1 from org/pr-1" pr-1
git -C "$DEV" push -q origin main
MERGE=$(git -C "$DEV" rev-parse HEAD)
n2_before=$(n2_events)
echo 1 >"$STUB/pr-of-$MERGE"
echo "$PR_HEAD" >"$STUB/pr-1-head"
echo carol >"$STUB/pr-1-approvers"
echo 101 >"$STUB/run-of-$PR_HEAD"
cat >"$AP_TMP/gh-push.json" <<EOF
{"github": {"event_name": "push", "sha": "$MERGE", "ref": "refs/heads/main", "repository": "org/pod-a",
  "run_id": 102, "actor": "bob", "token": "ghs_stub", "event": {"before": "$MAIN_BEFORE"}},
 "runner_env": {"PLUMB_JOURNAL": "$JOURNAL", "PATH": "$RUNNER_PATH"}}
EOF
ci github "$GH" "$AP_TMP/gh-push.json"
check "github merge: the pipeline passes (rc=$RC)" test "$RC" = 0
check "github merge: the apply job ran, the plan job did not" \
  bash -c "grep -q '^job apply$' $AP_TMP/out && grep -q '^job plan: skipped' $AP_TMP/out"
check "github merge: the reviewed plan was accepted at the merge commit" \
  grep -q "the plan was made at ${PR_HEAD:0:12}; .* is at ${MERGE:0:12}" "$AP_TMP/out"
check "github merge: apply says it left n2 as it is, unhealthy" \
  grep -q "left as it is, unhealthy (rollout rolling: unhealthy: skip): n2" "$AP_TMP/out"
check "github merge: n1 runs DCGM 1:3.3.7" \
  bash -c "$TB ssh n1 dpkg-query -W datacenter-gpu-manager | grep -q '[[:space:]]1:3.3.7\$'"
check "github merge: n1's marker records the merge commit" bash -c "$TB ssh n1 cat /var/lib/plumb/marker.json | grep -q $MERGE"
check "github merge: n1 is back in service" test "$(state_of n1)" = idle
check "github merge: n2 (unhealthy) still runs DCGM 1:3.3.5, untouched" \
  bash -c "$TB ssh n2 dpkg-query -W datacenter-gpu-manager | grep -q '[[:space:]]1:3.3.5\$'"
n2_state=$(state_of n2) n2_after=$(n2_events)
check "github merge: n2 was never drained, nothing happened on it ($n2_state; events $n2_before -> $n2_after)" \
  test "$n2_state $n2_after" = "idle $n2_before"
runs_json
check "github merge: the run records the commit applied and the one reviewed" \
  pyj "$AP_TMP/runs.json" "j[0]['commit'] == '$MERGE' and j[0]['plan_commit'] == '$PR_HEAD'"
check "github merge: the run records the approver, the CI actor and the job" \
  pyj "$AP_TMP/runs.json" "j[0]['who']['approver'] == 'carol' and j[0]['who']['ci'] == 'github' and j[0]['who']['ci_actor'] == 'bob' and j[0]['who']['ci_job'].endswith('/org/pod-a/actions/runs/102')"
check "github merge: the run records the signer (the forge's key) and the author" \
  pyj "$AP_TMP/runs.json" "j[0]['who']['signer'].startswith('ssh forge@example.com') and j[0]['who']['author'].startswith('alice')"
check "github merge: the record step verified the journal" grep -q "^verified: every run" "$AP_TMP/out"

# The recipe's exit handling: a pull request whose commit the policy refuses (unsigned) fails
# the pipeline at the plan step (plumb's exit 1 is an error, not "no changes"), posts no
# comment and keeps no plan; a push that no pull request merged has no reviewed plan to apply.
git -C "$DEV" checkout -q -b pr-3
sed -i 's/vm.swappiness: 60/vm.swappiness: 30/' "$DEV/stacks/gpu-2025q4.yaml"
git -C "$DEV" commit -q -am "unsigned pull request"
git -C "$DEV" push -q origin pr-3
PR3=$(git -C "$DEV" rev-parse HEAD)
git -C "$DEV" checkout -q main
events_gh=$(events_total)
sed -e "s/$PR_HEAD/$PR3/g" -e 's/"number": 1/"number": 3/' -e 's/"run_id": 101/"run_id": 103/' \
  "$AP_TMP/gh-pr.json" >"$AP_TMP/gh-pr3.json"
ci github "$GH" "$AP_TMP/gh-pr3.json"
check "github PR, unsigned: the pipeline fails with plumb's exit 1 (rc=$RC)" test "$RC" = 1
check "github PR, unsigned: the plan step says plumb plan failed, and why" \
  bash -c "grep -q 'plumb plan failed (exit 1)' $AP_TMP/out && grep -q 'is not signed' $AP_TMP/out"
check "github PR, unsigned: the steps after plan did not run" grep -q -- "-- comment: skipped" "$AP_TMP/out"
check "github PR, unsigned: no comment was posted" test ! -e "$STUB/comment-3.md"
check "github PR, unsigned: no plan was kept as the artefact" test ! -e "$ART/103"
check "github PR, unsigned: nothing changed on the nodes" test "$(events_total)" = "$events_gh"
sed -e "s/$MERGE/$PR3/g" -e 's/"run_id": 102/"run_id": 104/' "$AP_TMP/gh-push.json" >"$AP_TMP/gh-push3.json"
ci github "$GH" "$AP_TMP/gh-push3.json"
check "github push of a commit no pull request merged: the pipeline fails (rc=$RC)" test "$RC" = 1
check "  saying there is no reviewed plan, before plumb apply runs" \
  bash -c "grep -q 'did not come from a pull request' $AP_TMP/out && grep -q -- '-- apply: skipped' $AP_TMP/out"
check "  nothing changed on the nodes" test "$(events_total)" = "$events_gh"

# ---- GitLab CI ----------------------------------------------------------------------------
GL=$PLUMB_SRC/examples/ci/gitlab/.gitlab-ci.yml
# n2 repaired (its GPU reset): the next plan changes it with the rest.
"$TB" state n2 gpu_ecc_uncorrected_3=0 >/dev/null
git -C "$DEV" checkout -q -b mr-2
sed -i 's/vm.swappiness: 60/vm.swappiness: 10/' "$DEV/stacks/gpu-2025q4.yaml"
git -C "$DEV" add -A && signed alice commit -q -S -m "swappiness 10"
git -C "$DEV" push -q origin mr-2
MR_HEAD=$(git -C "$DEV" rev-parse HEAD)
events1=$(events_total)
gl_vars() { # gl_vars FILE KEY=VALUE...: the predefined variables of one pipeline
  local f=$1; shift
  python3 - "$f" "$@" <<'PY'
import json, sys
v = {"CI_API_V4_URL": "https://gitlab.example/api/v4", "CI_PROJECT_ID": "7",
     "CI_DEFAULT_BRANCH": "main", "PLUMB_GITLAB_TOKEN": "glpat-stub-token"}
for kv in sys.argv[2:]:
    k, _, val = kv.partition("=")
    v[k] = val
json.dump(v, open(sys.argv[1], "w"))
PY
}
gl_vars "$AP_TMP/gl-mr.json" CI_PIPELINE_SOURCE=merge_request_event CI_COMMIT_SHA="$MR_HEAD" \
  CI_MERGE_REQUEST_IID=2 CI_MERGE_REQUEST_DIFF_BASE_SHA="$MERGE" CI_PIPELINE_ID=201 \
  GITLAB_USER_LOGIN=alice PLUMB_JOURNAL="$JOURNAL" PATH="$RUNNER_PATH"
ci gitlab "$GL" "$AP_TMP/gl-mr.json"
check "gitlab MR: the pipeline passes (rc=$RC)" test "$RC" = 0
check "gitlab MR: validate and plan ran, apply did not" \
  bash -c "grep -q '^job plumb-validate$' $AP_TMP/out && grep -q '^job plumb-plan$' $AP_TMP/out && grep -q '^job plumb-apply: skipped' $AP_TMP/out"
check "gitlab MR: the plan file is the artefact" test -s "$ART/201/plumb-plan/plan.json"
check "gitlab MR: the plan is the MR note (n2, repaired, gets DCGM too)" grep -q "Plan: 2 node(s) to change (1 drain, 1 none), 0 in sync, 0 unreadable\.\*\*" "$STUB/note-2.md"
check "gitlab MR: nothing changed on the nodes" test "$(events_total)" = "$events1"

# A squash merge: another commit (the forge's signature), the same tree.
git -C "$DEV" checkout -q main
SQUASH=$(GIT_COMMITTER_NAME=forge GIT_COMMITTER_EMAIL=forge@example.com \
  signed forge commit-tree -S -p "$MERGE" -m "swappiness 10 (!2)" "$MR_HEAD^{tree}")
git -C "$DEV" update-ref refs/heads/main "$SQUASH"
git -C "$DEV" push -q origin main
echo '[{"iid": 2}]' >"$STUB/mr-of-$SQUASH"
echo '{"approved_by": [{"user": {"username": "erin"}}]}' >"$STUB/mr-2-approvals"
echo '[{"id": 201, "status": "success"}]' >"$STUB/mr-2-pipelines"
echo '[{"id": 9001, "name": "plumb-plan"}, {"id": 9000, "name": "plumb-validate"}]' >"$STUB/pipeline-201-jobs"
mkdir -p "$STUB/job-9001-artifacts" && cp "$ART/201/plumb-plan/plan.json" "$STUB/job-9001-artifacts/"
gl_vars "$AP_TMP/gl-push.json" CI_PIPELINE_SOURCE=push CI_COMMIT_BRANCH=main CI_COMMIT_SHA="$SQUASH" \
  CI_COMMIT_BEFORE_SHA="$MERGE" CI_PIPELINE_ID=202 GITLAB_USER_LOGIN=dave \
  CI_JOB_URL=https://gitlab.example/org/pod-a/-/jobs/9100 PLUMB_JOURNAL="$JOURNAL" PATH="$RUNNER_PATH"
ci gitlab "$GL" "$AP_TMP/gl-push.json"
check "gitlab merge: the pipeline passes (rc=$RC)" test "$RC" = 0
check "gitlab merge: only the apply job ran" \
  bash -c "grep -q '^job plumb-apply$' $AP_TMP/out && grep -q '^job plumb-plan: skipped' $AP_TMP/out"
for n in n1 n2; do
  check "gitlab merge: $n has vm.swappiness 10" bash -c "[[ \$($TB ssh $n sysctl -n vm.swappiness) == 10 ]]"
  check "gitlab merge: $n's marker records the squash commit" bash -c "$TB ssh $n cat /var/lib/plumb/marker.json | grep -q $SQUASH"
done
check "gitlab merge: n2, repaired, runs DCGM 1:3.3.7 now" \
  bash -c "$TB ssh n2 dpkg-query -W datacenter-gpu-manager | grep -q '[[:space:]]1:3.3.7\$'"
runs_json
check "gitlab merge: the run records the squash commit, the MR's commit, the approver, the actor" \
  pyj "$AP_TMP/runs.json" "j[0]['commit'] == '$SQUASH' and j[0]['plan_commit'] == '$MR_HEAD' and j[0]['who']['approver'] == 'erin' and j[0]['who']['ci'] == 'gitlab' and j[0]['who']['ci_actor'] == 'dave'"
check "gitlab: the token never reached the output" bash -c "! grep -q glpat-stub-token $AP_TMP/out $STUB/note-2.md"

# ---- an unsigned commit on main: refused before any node is touched ----------------------
sed -i 's/vm.swappiness: 10/vm.swappiness: 20/' "$DEV/stacks/gpu-2025q4.yaml"
git -C "$DEV" commit -q -am "unsigned, pushed past review"
git -C "$DEV" push -q origin main
events2=$(events_total)
"$TB" exec env PLUMB_JOURNAL="$JOURNAL" "$PLUMB" apply --repo "$DEV" --ref main --auto-approve \
  >"$AP_TMP/out" 2>"$AP_TMP/err" && RC=0 || RC=$?
check "unsigned commit: apply refused (rc=$RC)" test "$RC" = 1
check "unsigned commit: the reason names the policy" grep -q "is not signed, and policy.yaml at" "$AP_TMP/err"
check "unsigned commit: no node was touched" test "$(events_total)" = "$events2"
for n in n1 n2; do check "unsigned commit: $n still in service, never drained" test "$(state_of $n)" = idle; done
runs_json
check "unsigned commit: no run was journaled (still the two pipelines' runs)" pyj "$AP_TMP/runs.json" "len(j) == 2"
plumb_in history --verify --journal "$JOURNAL" >"$AP_TMP/verify.txt" 2>&1 && RC=0 || RC=$?
check "the journal verifies after both pipelines (rc=$RC)" test "$RC" = 0

# The recipes' structure: one apply at a time, never cancelled halfway.
python3 "$RECIPE" parse "$GH" >"$AP_TMP/gh.json"
python3 "$RECIPE" parse "$GL" >"$AP_TMP/gl.json"
check "github: the apply job's concurrency group queues, never cancels" \
  pyj "$AP_TMP/gh.json" "j['jobs']['apply']['concurrency'] == {'group': 'plumb-apply', 'cancel-in-progress': False}"
check "gitlab: the apply job holds a resource group" \
  pyj "$AP_TMP/gl.json" "j['plumb-apply']['resource_group'] == 'plumb-apply'"
ap_finish
