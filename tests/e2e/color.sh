#!/usr/bin/env bash
# Colour: on a terminal by default, never in a pipe or file, never with NO_COLOR, always with
# --color=always, never in JSON; + ~ - markers coloured like terraform's, DRIFT red. Every verb
# takes --color. A pseudo-terminal comes from script(1).
set -uo pipefail
: "${PLUMB:?path to the plumb binary}" "${PLUMB_SRC:?source root}"
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
python3 "$PLUMB_SRC/bench/plan/gen.py" --template "$PLUMB_SRC/bench/plan/template-facts.json" \
  --nodes 8 --out "$E2E_TMP/up" --drift-every 4 >/dev/null
U=$E2E_TMP/up
PLAN=(plan --repo "$U/repo" --facts "$U/facts.json" --no-scheduler --no-bmc)
DRIFT=(drift --repo "$U/repo" --facts "$U/facts.json" --no-bmc)
esc=$'\033\['
yellow_change=$'\033\\[33m +~ '

expect_rc 0 "plan into a pipe" -- "$PLUMB" "${PLAN[@]}"
expect_grep "^~ gpu" "$E2E_OUT" "the plan has changes"
expect_no_grep "$esc" "$E2E_OUT" "no colour into a pipe (auto)"
expect_rc 0 "plan --color=always" -- "$PLUMB" "${PLAN[@]}" --color=always
expect_grep "$yellow_change" "$E2E_OUT" "--color=always: a ~ change line is yellow"
expect_rc 2 "drift --color always" -- "$PLUMB" "${DRIFT[@]}" --color always
expect_grep $'\033\\[31mDRIFT' "$E2E_OUT" "the DRIFT verdict is red"
expect_rc 2 "drift --format json --color always" -- "$PLUMB" "${DRIFT[@]}" --format json --color always
expect_no_grep "$esc" "$E2E_OUT" "JSON is never coloured"
expect_rc 2 "drift --out FILE --color always" -- "$PLUMB" "${DRIFT[@]}" --out "$E2E_TMP/drift.txt" --color always
expect_no_grep "$esc" "$E2E_TMP/drift.txt" "a file is never coloured"
expect_rc 1 "--color=sometimes is refused" -- "$PLUMB" "${PLAN[@]}" --color=sometimes
expect_grep "auto,always,never" "$E2E_ERR" "... naming the three values"

# On a terminal (script(1) gives the command a pseudo-terminal; its output is the terminal's).
on_tty() { script -qec "$*" /dev/null </dev/null; }
cmdline="$(printf '%q ' "$PLUMB" "${PLAN[@]}")"
on_tty "env -u NO_COLOR TERM=xterm $cmdline" >"$E2E_TMP/tty.txt" 2>&1
expect_grep "$yellow_change" "$E2E_TMP/tty.txt" "a terminal gets colour by default"
on_tty "NO_COLOR=1 TERM=xterm $cmdline" >"$E2E_TMP/nocolor.txt" 2>&1
expect_grep "^~ gpu" "$E2E_TMP/nocolor.txt" "NO_COLOR: the plan is shown"
expect_no_grep "$esc" "$E2E_TMP/nocolor.txt" "NO_COLOR: no colour on a terminal"
on_tty "env -u NO_COLOR TERM=dumb $cmdline" >"$E2E_TMP/dumb.txt" 2>&1
expect_no_grep "$esc" "$E2E_TMP/dumb.txt" "TERM=dumb: no colour"
on_tty "env -u NO_COLOR TERM=xterm $cmdline --color never" >"$E2E_TMP/never.txt" 2>&1
expect_no_grep "$esc" "$E2E_TMP/never.txt" "--color never on a terminal: no colour"

# One flag, one meaning: every verb and nested command takes it.
lacking=
verbs=$("$PLUMB" --help | awk '/^Subcommands:/{s=1; next} s && /^  [a-z]/{print $1} s && /^$/{s=0}')
for v in $verbs bmc\ inventory bmc\ plan acceptance\ verify; do
  # shellcheck disable=SC2086
  # Read whole, then matched: `| grep -q` under pipefail fails when grep's early exit sends
  # plumb SIGPIPE mid-help (seen in CI beside a CPU hog).
  h=$("$PLUMB" $v --help 2>/dev/null) || true
  [[ $h == *--color* ]] || lacking+=" [$v]"
done
[[ -z $lacking ]] && pass "every verb's --help lists --color" || fail "no --color in:$lacking"
finish
