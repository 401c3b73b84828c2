#!/usr/bin/env bash
# The import rule (cmd -> plans -> modules -> transport; inventory/schemas for all; nothing -> cmd)
# is enforced by include shims: a library sees only the headers of what it links. This test
# compiles probe files with exactly the include dirs a library gets, and expects the allowed
# includes to compile and the wrong-way ones to fail.
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
  [plumb_plans]="plumb_plans plumb_modules plumb_transport plumb_inventory plumb_schemas"
)

check() {  # check LIB HEADER expect(ok|fail)
  local lib=$1 header=$2 expect=$3 flags=() got
  for d in ${dirs[$lib]}; do flags+=(-I "$shims/$d"); done
  printf '#include "%s"\n' "$header" > "$tmp/probe.cc"
  if "$cxx" -std=c++20 -fsyntax-only "${flags[@]}" "$tmp/probe.cc" 2>/dev/null; then got=ok; else got=fail; fi
  if [[ $got == "$expect" ]]; then
    pass=$((pass + 1)); echo "ok   $lib includes $header: $got"
  else
    fail=$((fail + 1)); echo "FAIL $lib includes $header: expected $expect, got $got"
  fi
}

check plumb_plans plans/plan.h ok               # controls: the rule allows these
check plumb_modules modules/module.h ok
check plumb_transport modules/transport/shell.h ok
check plumb_inventory inventory/model.h ok
check plumb_transport modules/module.h fail     # transport must not see modules
check plumb_transport inventory/model.h fail
check plumb_modules plans/plan.h fail           # modules must not see plans
check plumb_plans cmd/command.h fail            # nobody sees cmd
check plumb_inventory modules/module.h fail
check plumb_schemas inventory/model.h fail

# No relative includes that would walk around the shims.
if grep -rnE '#include "\.\./' --include='*.cc' --include='*.h' "$PLUMB_SRC"/{cmd,plans,modules,inventory,schemas} ; then
  fail=$((fail + 1)); echo "FAIL relative includes found (above)"
else
  pass=$((pass + 1)); echo "ok   no relative includes"
fi
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
