#!/usr/bin/env bash
# Shell completion and man pages, both generated from the CLI definition --help prints: bash's
# completion function driven as bash drives it (COMP_WORDS/COMP_CWORD -> COMPREPLY), node names
# from a real cluster repo after --limit, and a man page per verb naming every option its
# --help names. zsh and fish scripts are syntax-checked where those shells are installed.
set -uo pipefail
: "${PLUMB:?path to the plumb binary}" "${PLUMB_SRC:?source root}"
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
pod=$E2E_TMP/pod
make_cluster_repo "$PLUMB_SRC/examples/h100-pod" "$pod"
# The scripts call `plumb` by name (for __nodes), as an installed plumb is.
mkdir -p "$E2E_TMP/bin" && ln -s "$PLUMB" "$E2E_TMP/bin/plumb"
export PATH=$E2E_TMP/bin:$PATH

echo "# bash completion"
expect_rc 0 "plumb completion bash" -- "$PLUMB" completion bash
cp "$E2E_OUT" "$E2E_TMP/plumb.bash"
expect_rc 0 "the script parses (bash -n)" -- bash -n "$E2E_TMP/plumb.bash"
expect_rc 1 "an unknown shell is refused" -- "$PLUMB" completion tcsh
expect_grep "tcsh not in \{bash,zsh,fish\}|bash,zsh,fish" "$E2E_ERR" "... naming the shells it knows"

# complete_line LINE: completes LINE (the cursor at its end) as bash would: COMP_LINE and
# COMP_POINT, COMP_WORDS split at blanks and at bash's default COMP_WORDBREAKS ('=' '@' ':'
# as words of their own), then _plumb; prints each reply as the whole word it leaves on the
# line (readline replaces only the text after the last word break).
complete_line() {
  (cd "${CWD:-$E2E_TMP}" && bash -c '
    source "$1"; line=$2
    COMP_LINE=$line; COMP_POINT=${#line}; COMP_WORDBREAKS=$3
    read -ra blank <<<"$line"; [[ -z $line || $line == *" " ]] && blank+=("")
    COMP_WORDS=()
    for b in "${blank[@]}"; do
      rest=$b
      while [[ $rest =~ ^([^=@:]*)([=@:]+)(.*)$ ]]; do
        [[ -n ${BASH_REMATCH[1]} ]] && COMP_WORDS+=("${BASH_REMATCH[1]}")
        COMP_WORDS+=("${BASH_REMATCH[2]}"); rest=${BASH_REMATCH[3]}
      done
      [[ -n $rest || -z $b ]] && COMP_WORDS+=("$rest")
    done
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _plumb
    rl=${COMP_WORDS[COMP_CWORD]}; [[ $rl =~ ^[=@:]+$ ]] && rl=
    token=${blank[${#blank[@]} - 1]}
    for r in "${COMPREPLY[@]}"; do printf "%s\n" "${token%"$rl"}$r"; done' _ "$E2E_TMP/plumb.bash" "$1" $' \t\n"\'><=;|&(:@')
}
# expect_completion DESC WANT LINE: WANT is the exact, space-separated, sorted list of words.
expect_completion() {
  local desc=$1 want=$2 line=$3
  local got
  got=$(complete_line "$line" | sort | tr '\n' ' ' | sed 's/ $//')
  if [[ "$got" == "$want" ]]; then pass "$desc"; else fail "$desc: [$line] gave [$got], wanted [$want]"; fi
}
verbs=$("$PLUMB" --help | awk '/^Subcommands:/{s=1; next} s && /^  [a-z]/{print $1} s && /^$/{s=0}' | sort | tr '\n' ' ' | sed 's/ $//')
[[ -n $verbs ]] && pass "plumb --help lists verbs ($verbs)" || fail "no verbs in plumb --help"
expect_completion "every verb after plumb (and no hidden one)" "$verbs" "plumb "
expect_completion "a verb from its start" "plan" "plumb pl"
expect_completion "options of a verb" "--facts --fanout --format" "plumb plan --f"
expect_completion "--format values of plan" "json markdown text" "plumb plan --format "
expect_completion "--format values of drift, from a prefix" "json junit" "plumb drift --format j"
expect_completion "--format=VALUE (bash breaks the word at =)" "--format=json --format=junit" "plumb drift --format=j"
expect_completion "--color= right after the =" "--color=always --color=auto --color=never" "plumb plan --color="
expect_completion "bmc's subcommands" "apply inventory plan reset" "plumb bmc "
expect_completion "options of a nested command" "--limit" "plumb bmc inventory --li"
expect_completion "completion's shells" "bash fish zsh" "plumb completion "
expect_completion "no second shell once one is typed" "" "plumb completion bash "
expect_completion "a run id is not a file name (--resume)" "" "plumb apply --resume "
expect_completion "a number is not a file name (--fanout)" "" "plumb plan --fanout "
nodes=$(cd "$pod" && "$PLUMB" __nodes | sort | tr '\n' ' ' | sed 's/ $//')
[[ $nodes == *"gpu001"* && $nodes == *"@h100-train"* ]] && pass "__nodes lists nodes and @groups" ||
  fail "__nodes: [$nodes]"
CWD=$pod expect_completion "--limit: the repo's nodes and @groups (from the repo's root)" "$nodes" "plumb plan --limit "
CWD=$pod/stacks expect_completion "--limit from a subdirectory of the repo (found upwards)" "$nodes" "plumb plan --limit "
expect_completion "--limit with --repo DIR on the line" "@h100-infer @h100-train" "plumb drift --repo $pod --limit @h100"
expect_completion "--limit with --repo=DIR on the line" "@h100-infer @h100-train" "plumb drift --repo=$pod --limit @h100"
CWD=$pod expect_completion "--limit @ (bash breaks the word at @)" "@gpu @h100-infer @h100-train" "plumb plan --limit @"
CWD=$pod expect_completion "--limit: the last of a comma list, negated" "gpu003,!gpu030 gpu003,!gpu031 gpu003,!gpu032" \
  "plumb apply --limit gpu003,!gpu03"
CWD=$pod expect_completion "--limit: a group after a comma" "gpu003,@h100-infer gpu003,@h100-train" \
  "plumb apply --limit gpu003,@h1"
CWD=$pod expect_completion "--limit=: the value after =" "--limit=gpu030 --limit=gpu031 --limit=gpu032" "plumb plan --limit=gpu03"
# A pattern with glob characters typed before: its replies are not matched against files here.
mkdir -p "$E2E_TMP/globs" && touch "$E2E_TMP/globs/gpu001,gpu030"
CWD=$E2E_TMP/globs expect_completion "--limit: a glob typed earlier stays as typed" \
  "gpu00[1-2],gpu030 gpu00[1-2],gpu031 gpu00[1-2],gpu032" "plumb plan --repo $pod --limit gpu00[1-2],gpu03"
expect_completion "nothing from a directory that is no cluster repo" "" "plumb plan --limit "
CWD=$pod expect_completion "show's NODE argument" "gpu030 gpu031 gpu032" "plumb show gpu03"
CWD=$pod expect_completion "no second NODE once one is typed" "" "plumb show gpu030 "
CWD=$pod expect_completion "an option's value is not the NODE" "gpu030 gpu031 gpu032" "plumb show --ref HEAD gpu03"
mkdir -p "$E2E_TMP/dirs/alpha" && touch "$E2E_TMP/dirs/afile" "$E2E_TMP/dirs/a file"
CWD=$E2E_TMP/dirs expect_completion "--repo: directories only" "alpha" "plumb plan --repo a"
CWD=$E2E_TMP/dirs expect_completion "--out: files" "a file afile alpha" "plumb plan --out a"
grep -q "compopt -o filenames" "$E2E_TMP/plumb.bash" && pass "file names are completed as file names (quoted by bash)" ||
  fail "no compopt -o filenames"

echo "# zsh and fish"
# fish: its own `complete -C LINE` lists what TAB would offer.
fish_offers() { # DESC WANT LINE [DIR]
  local got
  got=$(cd "${4:-$E2E_TMP}" && fish -c "source '$E2E_TMP/plumb.fish'; complete -C '$3'" 2>&1 | cut -f1 |
        sort | tr '\n' ' ' | sed 's/ $//')
  if [[ $got == "$2" ]]; then pass "fish: $1"; else fail "fish: $1: [$3] gave [$got], wanted [$2]"; fi
}
check_fish() {
  fish_offers "a verb" "plan" "plumb pl"
  fish_offers "--format values" "json markdown text" "plumb plan --format "
  fish_offers "bmc's subcommands" "apply inventory plan reset" "plumb bmc "
  fish_offers "a nested command's option" "--limit" "plumb bmc plan --li"
  fish_offers "--limit: node names" "gpu030 gpu031 gpu032" "plumb plan --limit gpu03" "$pod"
  fish_offers "--limit: node names from a subdirectory" "gpu030 gpu031 gpu032" "plumb plan --limit gpu03" "$pod/stacks"
}
# zsh: the completion system's builtins stubbed to print what they are given (the script's
# own logic decides what; zsh's matching is not under test).
zsh_offers() { # DESC WANT DIR WORD...
  local desc=$1 want=$2 dir=$3 got
  shift 3
  got=$(cd "$dir" && zsh -f -c '
    compadd() { while [[ $1 == -* && $1 != -- ]]; do shift; done; [[ $1 == -- ]] && shift; print -l -- "$@"; }
    _describe() { local -a a; a=("${(@P)2}"); print -l -- "${a[@]%%:*}"; }
    _files() { print -- "<files>"; }
    compset() { :; }
    compdef() { :; }
    source "$1"; shift
    words=("$@"); CURRENT=$#words
    _plumb' _ "$E2E_TMP/plumb.zsh" "$@" 2>&1 | grep -v '^$' | sort | tr '\n' ' ' | sed 's/ $//')
  if [[ $got == "$want" ]]; then pass "zsh: $desc"; else fail "zsh: $desc: [$*] gave [$got], wanted [$want]"; fi
}
check_zsh() {
  zsh_offers "--format values" "json markdown text" "$E2E_TMP" plumb plan --format ""
  zsh_offers "--format=VALUE" "html json junit prom sarif text" "$E2E_TMP" plumb drift --format=j
  zsh_offers "bmc's subcommands" "apply inventory plan reset" "$E2E_TMP" plumb bmc ""
  zsh_offers "--limit: node names and groups" "$nodes" "$pod/stacks" plumb plan --limit ""
  zsh_offers "--repo: directories" "<files>" "$E2E_TMP" plumb plan --repo ""
  zsh_offers "nothing for a run id" "" "$E2E_TMP" plumb apply --resume ""
  zsh_offers "no second NODE" "" "$pod" plumb show gpu001 ""
}
for sh in zsh fish; do
  expect_rc 0 "plumb completion $sh" -- "$PLUMB" completion "$sh"
  cp "$E2E_OUT" "$E2E_TMP/plumb.$sh"
  expect_grep "__nodes" "$E2E_TMP/plumb.$sh" "$sh: node names after --limit"
  expect_grep "markdown" "$E2E_TMP/plumb.$sh" "$sh: --format values"
  if command -v "$sh" >/dev/null; then
    expect_rc 0 "$sh -n parses it" -- "$sh" -n "$E2E_TMP/plumb.$sh"
    check_$sh
  else
    echo "PARTIAL SKIP: $sh is not installed: its script is not syntax-checked"
  fi
done

echo "# man pages"
man=$E2E_TMP/man
expect_rc 0 "plumb __man DIR" -- "$PLUMB" __man "$man"
for f in man1/plumb.1 man5/plumb-repo.5; do
  [[ -s $man/$f ]] && pass "$f written" || fail "$f missing"
done
# The roff text with its escapes undone, for grepping: \- is -, \fB..\fR fonts dropped.
plain() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\e/\\/g' -e 's/\\&//g' "$1"; }
missing_pages= missing_opts=
for v in $verbs; do
  page=$man/man1/plumb-$v.1
  if [[ ! -s $page ]]; then missing_pages+=" $v"; continue; fi
  plain "$page" >"$E2E_TMP/page.txt"
  # Every long option --help shows (hidden ones are not shown, nor documented).
  for o in $("$PLUMB" "$v" --help | grep -oE '^ +(-[a-zA-Z], ?)?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+'); do
    grep -qF -- "$o" "$E2E_TMP/page.txt" || missing_opts+=" $v:$o"
  done
  grep -q "^\.SH EXAMPLES" "$page" || missing_opts+=" $v:EXAMPLES"
done
[[ -z $missing_pages ]] && pass "a page for every verb" || fail "no page for:$missing_pages"
[[ -z $missing_opts ]] && pass "every verb's page names every option of its --help, and has EXAMPLES" ||
  fail "missing in the pages:$missing_opts"
plain "$man/man1/plumb.1" >"$E2E_TMP/root.txt"
for v in $verbs; do grep -q "plumb-$v" "$E2E_TMP/root.txt" || missing_pages+=" $v"; done
[[ -z $missing_pages ]] && pass "plumb(1) lists every verb's page" || fail "plumb(1) lacks:$missing_pages"
plain "$man/man5/plumb-repo.5" >"$E2E_TMP/repo.txt"
for k in "INVENTORY.YAML" "STACKS/<NAME>.YAML" "ROLLOUTS/<NAME>.YAML" "POLICY.YAML" "WAIVERS.YAML" \
         "defaults.ssh.known_hosts" "max_unavailable"; do
  grep -qF -- "$k" "$E2E_TMP/repo.txt" || missing_opts+=" $k"
done
[[ -z $missing_opts ]] && pass "plumb-repo(5) describes every file and its keys (from the schemas)" ||
  fail "plumb-repo(5) lacks:$missing_opts"
if command -v groff >/dev/null; then
  for f in "$man"/man1/*.1 "$man"/man5/*.5; do
    groff -man -Tutf8 -ww -z "$f" 2>>"$E2E_TMP/groff.err"
  done
  if [[ -s $E2E_TMP/groff.err ]]; then fail "groff warns:"; head "$E2E_TMP/groff.err"; else
    pass "every page formats without a groff warning"; fi
  groff -man -Tutf8 -P -c "$man/man1/plumb-plan.1" | col -b >"$E2E_TMP/plan.txt" 2>/dev/null
  expect_grep "^ +--detailed-exitcode" "$E2E_TMP/plan.txt" "plumb-plan(1) renders its options"
else
  echo "PARTIAL SKIP: groff is not installed: the pages are not rendered"
fi
finish
