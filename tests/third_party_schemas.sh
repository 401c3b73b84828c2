# shellcheck shell=bash
# Third-party schemas the report tests validate plumb's output against (the JUnit XSD of Jenkins'
# xUnit plugin, the SARIF 2.1.0 JSON Schema): public data kept out of the project, read from
# $PLUMB_THIRD_PARTY_SCHEMAS, else from ../shared/third-party-schemas/ next to the source root.
# Sourced, never run. (The unit tests' twin is tests/third_party_schemas.h.)

# third_party_schema FILE WHAT: prints FILE's path when it is there; otherwise prints a visible
# "skip: ..." line (WHAT, FILE and where it was looked for) and returns 1.
third_party_schema() {
  local dir=${PLUMB_THIRD_PARTY_SCHEMAS:-${PLUMB_SRC:?}/../shared/third-party-schemas}
  if [[ -f $dir/$1 ]]; then
    printf '%s\n' "$dir/$1"
    return 0
  fi
  echo "skip: $2 ($1) not found at $dir/$1; put it there or set PLUMB_THIRD_PARTY_SCHEMAS" >&2
  return 1
}
