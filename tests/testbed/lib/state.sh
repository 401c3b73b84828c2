# shellcheck shell=bash
# tb state NODE [-f FILE] [KEY | KEY=VALUE | -KEY]: read or write a node's
# state file (default current.conf; also pending.conf). Sourced by tb.
#
#   tb state n1                      print current.conf
#   tb state n1 driver               print one value (empty line if unset)
#   tb state n1 apt_delay=3          set a value (changes take effect at once
#                                    for what the fakes read on each call)
#   tb state n1 -apt_delay           delete a key
#   tb state n1 -f pending.conf      the same on pending.conf
#   tb state n1 -f packages          print another state file (read only)

tb_state() {
  local node=${1:-} file=current.conf
  [[ -n $node ]] || tb_die "usage: tb state NODE [-f FILE] [KEY|KEY=VALUE|-KEY]"
  shift
  [[ -n $TB_RUN ]] || tb_die "TB_RUN is not set"
  tb_require_node "$node"
  if [[ ${1:-} == -f ]]; then
    file=${2:?tb state: -f needs a file name}
    shift 2
  fi
  local st=$TB_RUN/nodes/$node/state f
  f=$st/${file##*/}
  [[ -f $f ]] || tb_die "state: no $file for $node"
  if [[ $# -eq 0 ]]; then
    cat "$f"
    return 0
  fi
  [[ $file == *.conf ]] || tb_die "state: only the .conf files take KEY arguments"
  local a k
  for a in "$@"; do
    case $a in
      -*=* | '') tb_die "state: bad argument '$a'" ;;
      -*)
        k=${a#-}
        tb_state_edit "$st" "$f" "$k" ;;
      *=*)
        k=${a%%=*}
        [[ $k =~ ^[A-Za-z0-9_.]+$ ]] || tb_die "state: bad key '$k'"
        tb_state_edit "$st" "$f" "$k" "${a#*=}" ;;
      *) sed -n "s/^$a=//p" "$f" | tail -1 | grep '' || echo ;;
    esac
  done
}

# Replace (or with no VALUE delete) KEY's line, under the lock the fakes use.
tb_state_edit() { # STATEDIR FILE KEY [VALUE]
  (
    flock 8
    { grep -v "^$3=" "$2" || true; [[ $# -lt 4 ]] || printf '%s=%s\n' "$3" "$4"; } >"$2.tmp.$$"
    mv "$2.tmp.$$" "$2"
  ) 8>"$1/.state.lock"
}
