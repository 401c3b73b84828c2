# shellcheck shell=bash disable=SC2034  # the settings are used by the files sourcing this one
# Settings and helpers shared by every `tb` subcommand. Sourced, never run.
#
# Environment (all optional):
#   TB_RUN        run directory: state, configs, logs, pid files of one testbed.
#                 `tb up` without it makes a fresh ${TMPDIR:-/tmp}/plumb-tb.XXXXXX and
#                 points ${TMPDIR:-/tmp}/plumb-tb.last at it; the other subcommands
#                 default to that link.
#   TB_NETNS      name of the private network namespace holding the testbed
#                 (default tb-<basename of TB_RUN>). Empty: use the current
#                 namespace, which must then be private (`unshare --net`).
#   TB_NET        first two octets of the node addresses (default 127.10).
#   TB_DOWNTIME   seconds a rebooting node stays down (default 3).
#   TB_DOWN_MODE  refuse (default): a down node refuses connections;
#                 drop: its packets are dropped, so connects time out.

# Only tb sources this file, as $TB_LIB/common.sh with TB_LIB absolute and every link resolved.
TB_HOME=${BASH_SOURCE[0]%/lib/common.sh}
TB_LAST_LINK=${TMPDIR:-/tmp}/plumb-tb.last
TB_RUN_GIVEN=${TB_RUN:-}
if [[ -z ${TB_RUN:-} && -L $TB_LAST_LINK ]]; then
  TB_RUN=$(readlink "$TB_LAST_LINK")
fi
TB_RUN=${TB_RUN:-}
TB_NET=${TB_NET:-127.10}
TB_DOWNTIME=${TB_DOWNTIME:-3}
TB_DOWN_MODE=${TB_DOWN_MODE:-refuse}
TB_SLURMCTLD_PORT=${TB_SLURMCTLD_PORT:-6817}
TB_SLURMD_PORT_BASE=${TB_SLURMD_PORT_BASE:-17000}

tb_die() { echo "tb: $*" >&2; exit 1; }

# The netns name is fixed at `tb up` time and recorded in the run dir, so later
# subcommands find it whatever TB_NETNS says then.
tb_load_netns() {
  if [[ -f $TB_RUN/netns ]]; then
    read -r TB_NETNS <"$TB_RUN/netns" || true
  elif [[ -d $TB_RUN/pids ]]; then
    TB_NETNS=   # started in an anonymous namespace (`unshare --net`)
  else
    TB_NETNS=${TB_NETNS-tb-$(basename "$TB_RUN")}
  fi
}

# Node index (1-based) -> address. n1 = 127.10.0.2 ... n249 = 127.10.0.250,
# n250 = 127.10.1.1: the last octet never reaches 0 or 255.
tb_addr() {
  local i=$1
  echo "$TB_NET.$((i / 250)).$((i % 250 + 1))"
}
TB_HEAD_ADDR_SUFFIX=255.254   # the --head node
TB_EXTRA_ADDR_SUFFIX=255.253  # second lo address (glibc AI_ADDRCONFIG, see README)
# The head node's bastion login (`jump: tbjump@<head>`): a user of its own, so that the
# connections its sshd forwards are told from the client's (both root otherwise) by the
# nftables rule behind `tb ctl behind-bastion`.
TB_JUMP_USER=tbjump
TB_JUMP_UID=64222

# Run a command in the testbed's network namespace. nsenter, not `ip netns
# exec`: the latter remounts /sys, which hides the cgroup mounts slurmd needs.
# tb_nsexec_replace runs it in place of this shell (exec: no fork, and whoever started tb can
# signal CMD itself, e.g. a test's sampler loop); tb_nsexec in a child, which costs what
# running CMD costs anyway (a fork, then the exec).
tb_nsexec_replace() { # CMD...
  [[ -z $TB_NETNS ]] || set -- nsenter --net="/run/netns/$TB_NETNS" "$@"
  exec "$@"
}
tb_nsexec() { (tb_nsexec_replace "$@"); }

tb_now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

# Kernel start time of a PID, in clock ticks since boot (field 22 of
# /proc/PID/stat). Stored next to each PID so that a stop never signals an
# unrelated process that reused the number.
tb_starttime() {
  local s
  { read -r s <"/proc/$1/stat"; } 2>/dev/null || return 0
  s=${s##*) }
  # shellcheck disable=SC2086  # split the stat fields on purpose
  set -- $s
  echo "${20}"
}

# tb_alive PID [STARTTIME]: running (a zombie counts as gone) and, when
# STARTTIME is given, still the same process.
tb_alive() {
  local s
  { read -r s <"/proc/$1/stat"; } 2>/dev/null || return 1
  s=${s##*) }
  [[ ${s:0:1} != Z ]] || return 1
  [[ -z ${2:-} || $(tb_starttime "$1") == "$2" ]]
}

# tb_pidfile_alive FILE: the "PID STARTTIME" recorded in FILE is running.
tb_pidfile_alive() {
  local p st
  read -r p st <"$1" 2>/dev/null || return 1
  [[ -n $p ]] && tb_alive "$p" "$st"
}

# Start a long-running command detached (own session, no terminal), inside
# the testbed netns, and record "PID STARTTIME" in $TB_RUN/pids/NAME.pid.
tb_spawn() { # NAME LOGFILE CMD...
  local name=$1 log=$2
  shift 2
  if [[ -n $TB_NETNS ]]; then set -- nsenter --net="/run/netns/$TB_NETNS" "$@"; fi
  setsid "$@" </dev/null >>"$log" 2>&1 &
  echo "$! $(tb_starttime $!)" >"$TB_RUN/pids/$name.pid"
}

# Node names of the running testbed, in order (nodes.txt: "name addr port").
tb_node_names() { cut -d' ' -f1 "$TB_RUN/client/nodes.txt"; }
tb_node_addr() { awk -v n="$1" '$1 == n { print $2 }' "$TB_RUN/client/nodes.txt"; }

tb_require_run() {
  [[ -n $TB_RUN ]] || tb_die "TB_RUN is not set and no testbed was started here"
  [[ -d $TB_RUN/pids ]] || tb_die "no running testbed in $TB_RUN"
  tb_load_netns
}
tb_require_node() {
  [[ -d $TB_RUN/nodes/$1 ]] || tb_die "no node '$1' in $TB_RUN"
}
