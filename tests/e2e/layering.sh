#!/usr/bin/env bash
# The import rule (cmd -> plans -> modules -> transport; inventory/schemas for all; nothing -> cmd;
# cmd -> cli -> plans and below; inside plans/ its layers in order) is enforced by include shims: a library sees only the headers of what it links. This test
# preprocesses probe files with exactly the include dirs a library gets, and expects the allowed
# includes to be found and the wrong-way ones not.
set -u
shims="$PLUMB_BUILD/include-shims"
cxx=${CXX:-c++}
pass=0 fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Include dirs per library = its own shim + the shims of everything it links (see CMakeLists.txt).
declare -A dirs=(
  [plumb_schemas]="plumb_schemas"
  [plumb_inventory]="plumb_inventory plumb_schemas"
  [plumb_transport]="plumb_transport plumb_schemas"
  [plumb_modules]="plumb_modules plumb_transport plumb_inventory plumb_schemas"
  [plumb_plans_core]="plumb_plans_core plumb_modules plumb_transport plumb_inventory plumb_schemas"
  [plumb_plans_trust]="plumb_plans_trust plumb_plans_core plumb_modules plumb_transport plumb_inventory plumb_schemas"
  [plumb_plans_plan]="plumb_plans_plan plumb_plans_core plumb_modules plumb_transport plumb_inventory plumb_schemas"
  [plumb_plans_observe]="plumb_plans_observe plumb_plans_plan plumb_plans_core plumb_modules plumb_transport plumb_inventory plumb_schemas"
  [plumb_plans_store]="plumb_plans_store plumb_plans_observe plumb_plans_plan plumb_plans_core plumb_modules plumb_transport plumb_inventory plumb_schemas"
  [plumb_plans_rollout]="plumb_plans_rollout plumb_plans_store plumb_plans_observe plumb_plans_plan plumb_plans_core plumb_modules plumb_transport plumb_inventory plumb_schemas"
  [plumb_plans_report]="plumb_plans_report plumb_plans_rollout plumb_plans_store plumb_plans_observe plumb_plans_plan plumb_plans_core plumb_modules plumb_transport plumb_inventory plumb_schemas"
  [plumb_plans_watch]="plumb_plans_watch plumb_plans_report plumb_plans_rollout plumb_plans_store plumb_plans_observe plumb_plans_plan plumb_plans_core plumb_modules plumb_transport plumb_inventory plumb_schemas"
  [plumb_cli]="plumb_cli plumb_plans_watch plumb_plans_session plumb_plans_report plumb_plans_trust plumb_plans_rollout plumb_plans_store plumb_plans_observe plumb_plans_plan plumb_plans_core plumb_modules plumb_transport plumb_inventory plumb_schemas"
  [plumb_plans_session]="plumb_plans_session plumb_plans_report plumb_plans_trust plumb_plans_rollout plumb_plans_store plumb_plans_observe plumb_plans_plan plumb_plans_core plumb_modules plumb_transport plumb_inventory plumb_schemas"
)

check() {  # check LIB HEADER expect(ok|fail)
  local lib=$1 header=$2 expect=$3 flags=() got
  for d in ${dirs[$lib]:-}; do flags+=(-I "$shims/$d"); done
  printf '#include "%s"\n' "$header" > "$tmp/probe.cc"
  # fail = the header is not found; a header whose own includes are not found is neither.
  # Visibility is the preprocessor's business: -E (no parse; whether each file compiles on its
  # own is `make check-includes`'s) costs ~50 ms a probe instead of a second or two.
  if "$cxx" -std=c++20 -E -o /dev/null "${flags[@]}" "$tmp/probe.cc" 2>"$tmp/err"; then got=ok
  elif grep -qF "$header: No such file" "$tmp/err"; then got=fail
  else got="error ($(grep -m1 error: "$tmp/err"))"; fi
  if [[ $got == "$expect" ]]; then
    pass=$((pass + 1)); echo "ok   $lib includes $header: $got"
  else
    fail=$((fail + 1)); echo "FAIL $lib includes $header: expected $expect, got $got"
  fi
}

check plumb_plans_plan plans/plan/plan.h ok     # controls: the rule allows these
check plumb_modules modules/module.h ok
check plumb_transport modules/transport/shell.h ok
check plumb_inventory inventory/model.h ok
check plumb_transport modules/module.h fail     # transport must not see modules
check plumb_transport inventory/model.h fail
check plumb_modules plans/plan/plan.h fail      # modules must not see plans
check plumb_modules plans/core/clock.h fail
check plumb_plans_watch cmd/command.h fail      # nobody sees cmd
check plumb_plans_core cmd/command.h fail
check plumb_inventory modules/module.h fail
check plumb_schemas inventory/model.h fail

# cli/ (the command line and its documentation) sits below cmd and above plans: it sees the
# flag types of plans (watch, session) and all below them; only cmd sees it.
check plumb_cli cli/completion.h ok
check plumb_cli modules/transport/shell.h ok
check plumb_cli schemas/embedded.h ok
check plumb_cli cmd/command.h fail
check plumb_cli cli/describe_app.h ok
check plumb_cli plans/session/apply_flags.h ok
check plumb_cli plans/watch/watch_flags.h ok
check plumb_cli plans/report/read_run.h ok
check plumb_cli modules/module.h ok
check plumb_cli inventory/model.h ok
check plumb_plans_watch cli/command_doc.h fail
check plumb_plans_session cli/apply_command.h fail
check plumb_plans_report cli/read_run_options.h fail
check plumb_modules cli/command_doc.h fail

# plans/ in layers: core <- plan <- observe <- store <- rollout <- report <- watch, trust on core.
# Each layer sees the ones before it (controls) and none after it.
check plumb_plans_core modules/module.h ok
check plumb_plans_plan plans/core/clock.h ok
check plumb_plans_trust plans/core/digest.h ok
check plumb_plans_observe plans/plan/planner.h ok
check plumb_plans_store plans/observe/observed.h ok
check plumb_plans_rollout plans/store/journal.h ok
check plumb_plans_rollout plans/plan/plan.h ok
check plumb_plans_report plans/rollout/rollout.h ok
check plumb_plans_watch plans/report/drift.h ok
check plumb_plans_watch plans/observe/gather.h ok
check plumb_plans_core plans/plan/plan.h fail
check plumb_plans_core plans/trust/commit_trust.h fail
check plumb_plans_plan plans/observe/observed.h fail
check plumb_plans_plan plans/store/journal.h fail
check plumb_plans_plan plans/rollout/rollout.h fail
check plumb_plans_plan plans/report/plan_text.h fail
check plumb_plans_plan plans/trust/commit_trust.h fail
check plumb_plans_trust plans/plan/plan.h fail
check plumb_plans_observe plans/store/journal.h fail
check plumb_plans_observe plans/rollout/apply_prepare.h fail
check plumb_plans_store plans/rollout/rollout.h fail
check plumb_plans_rollout plans/report/plan_text.h fail
check plumb_plans_rollout plans/watch/watcher.h fail
# session (the verbs' sessions) sits on report and trust, beside watch: it sees them, and no
# layer below it sees it.
check plumb_plans_session plans/trust/commit_trust.h ok
check plumb_plans_session cmd/command.h fail
check plumb_plans_session plans/watch/watcher.h fail
check plumb_plans_report plans/session/apply_session.h fail
check plumb_plans_watch plans/session/apply_session.h fail
check plumb_plans_rollout plans/session/apply_session.h fail
check plumb_plans_report plans/watch/watcher.h fail
check plumb_plans_report plans/trust/commit_trust.h fail

# The table above must be the link graph: every plans layer in CMakeLists.txt is in it, and
# each one's own row names exactly what it links (its PUBLIC plumb_plans_* dependency).
for lib in $(grep -oE '^plumb_library\((plumb_plans_[a-z]+)' "$PLUMB_SRC/CMakeLists.txt" | cut -d'(' -f2); do
  below=$(grep -oE "^target_link_libraries\($lib PUBLIC plumb_plans_[a-z]+" "$PLUMB_SRC/CMakeLists.txt" | awk '{print $3}')
  row=" ${dirs[$lib]:-} "
  if [[ -z ${dirs[$lib]:-} ]]; then
    fail=$((fail + 1)); echo "FAIL $lib is a library but not in the table"
  elif [[ -n $below && $row != *" $below "* ]]; then
    fail=$((fail + 1)); echo "FAIL $lib links $below but its row does not name it"
  else
    pass=$((pass + 1)); echo "ok   $lib in the table"
  fi
done

# No relative includes that would walk around the shims.
if grep -rnE '#include "\.\./' --include='*.cc' --include='*.h' "$PLUMB_SRC"/{cmd,cli,plans,modules,inventory,schemas} ; then
  fail=$((fail + 1)); echo "FAIL relative includes found (above)"
else
  pass=$((pass + 1)); echo "ok   no relative includes"
fi
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
