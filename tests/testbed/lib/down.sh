# shellcheck shell=bash
# tb down: stop everything `tb up` started, by pid file only (PID + start
# time, so a reused PID is never signalled), delete the network namespace and
# the run dir (TB_KEEP=1 keeps the run dir's logs and state). Sourced by tb.

# stop_pidfiles FILE...: TERM, wait up to 15 s, then KILL what is left.
tb_stop_pidfiles() {
  local f p
  for f in "$@"; do
    if tb_pidfile_alive "$f"; then
      read -r p _ <"$f"
      kill -TERM "$p" 2>/dev/null || true
    fi
  done
  for _ in $(seq 150); do
    local alive=0
    for f in "$@"; do tb_pidfile_alive "$f" && { alive=1; break; }; done
    ((alive)) || return 0
    sleep 0.1
  done
  for f in "$@"; do
    if tb_pidfile_alive "$f"; then
      read -r p _ <"$f"
      echo "tb down: KILL $p ($f)" >&2
      kill -KILL "$p" 2>/dev/null || true
    fi
  done
}

tb_down() {
  [[ -n $TB_RUN ]] || tb_die "down: TB_RUN is not set"
  if [[ ! -d $TB_RUN/pids ]]; then
    echo "tb down: nothing running in $TB_RUN" >&2
    return 0
  fi
  tb_load_netns
  local t0 t_nodes t1 f
  t0=$(tb_now_ms)
  shopt -s nullglob
  local nodes=("$TB_RUN"/pids/node-*.pid)
  # Supervisors power their node off (its init kills the whole pid namespace)
  # and exit once unshare has returned.
  ((${#nodes[@]} == 0)) || tb_stop_pidfiles "${nodes[@]}"
  # A supervisor that had to be KILLed leaves its unshare: stop that too.
  local strays=()
  for f in "$TB_RUN"/nodes/*/ctl/unshare.pid; do tb_pidfile_alive "$f" && strays+=("$f"); done
  ((${#strays[@]} == 0)) || tb_stop_pidfiles "${strays[@]}"
  t_nodes=$(tb_now_ms)
  [[ ! -f $TB_RUN/pids/slurmctld.pid ]] || tb_stop_pidfiles "$TB_RUN/pids/slurmctld.pid"
  [[ ! -f $TB_RUN/pids/munged.pid ]] || tb_stop_pidfiles "$TB_RUN/pids/munged.pid"
  # anything else a test registered with tb_spawn (e.g. a BMC emulator)
  local rest=()
  for f in "$TB_RUN"/pids/*.pid; do
    case ${f##*/} in node-*.pid | slurmctld.pid | munged.pid) ;; *) rest+=("$f") ;; esac
  done
  ((${#rest[@]} == 0)) || tb_stop_pidfiles "${rest[@]}"
  if [[ -n $TB_NETNS ]]; then ip netns del "$TB_NETNS" 2>/dev/null || true; fi
  t1=$(tb_now_ms)
  echo "tb down: stopped in $((t1 - t0)) ms (nodes $((t_nodes - t0)) ms)" >&2
  if [[ ${TB_KEEP:-0} == 1 ]]; then
    rm -rf "$TB_RUN/pids"
    if [[ -e $TB_RUN/.tmpfs ]]; then
      echo "tb down: kept $TB_RUN (a tmpfs: 'umount $TB_RUN && rmdir $TB_RUN' when done)" >&2
    else
      echo "tb down: kept $TB_RUN" >&2
    fi
  elif [[ -e $TB_RUN/.tmpfs ]]; then
    # lazily if busy (say a shell still has its cwd there): the memory goes
    # with the last user
    umount "$TB_RUN" 2>/dev/null || umount -l "$TB_RUN"
    rmdir "$TB_RUN"
  else
    rm -rf "$TB_RUN"
  fi
  if [[ -L $TB_LAST_LINK && $(readlink "$TB_LAST_LINK") == "$TB_RUN" ]]; then rm -f "$TB_LAST_LINK"; fi
}
