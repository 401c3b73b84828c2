#!/bin/bash
# Keeps one simulated node "powered", like the node's power supply and BMC.
# Boots node/init.sh in fresh pid+mount+uts(+time) namespaces, and when the
# node's init ends decides what happens next:
#   OS reboot       down for TB_DOWNTIME s, pending.conf applied, boots again
#                   (with reboot_hang=1 in current.conf it never comes back
#                   until a BMC action: `tb ctl reboot|poweron`)
#   OS poweroff     stays off until `tb ctl poweron`
#   BMC reset/off   requested by `tb ctl` through ctl/request + SIGUSR1
# SIGTERM: power off for good and exit (tb down).
#
# ctl/status tells the state: booting | up | down (between power cycles) |
# off | hung.
set -u
ND=$1
# shellcheck source=/dev/null
. "$ND/node.env" # TB_NODE TB_ADDR TB_RUN TB_HOME TB_SLURMD TB_DOWNTIME TB_DOWN_MODE
CTL=$ND/ctl ST=$ND/state
child='' alive=0 stop=0 power=on reason=''

ev() { printf '%s %s\n' "${EPOCHREALTIME:0:14}" "$*" >>"$ST/events.log"; }
# atomic, so that `tb ctl status` never reads a half-written file
status() { echo "$1" >"$CTL/status.tmp" && mv "$CTL/status.tmp" "$CTL/status"; }
knob() { # KEY -> its value in current.conf (the last line wins)
  local k v val=""
  while IFS='=' read -r k v; do [[ $k == "$1" ]] && val=$v; done <"$ST/current.conf"
  echo "$val"
}

# Kernel start time of a PID (field 22 of /proc/PID/stat): tb down checks it
# before it signals a recorded PID.
starttime() {
  local s
  read -r s <"/proc/$1/stat" || return 0
  s=${s##*) }
  read -r -a f <<<"$s"
  echo "${f[19]}"
}

# Power the node off: SIGKILL its init (PID 1 inside). The kernel then kills
# every process of the node's PID namespace, and unshare returns once they are
# gone. SIGKILL because a namespace's init receives other signals from outside
# only once it has installed a handler, which a node still booting may not
# have. Before init exists, killing unshare is enough: --kill-child=SIGKILL.
kill_node() {
  local p=""
  [[ -n $child ]] && ((alive)) || return 0   # reaped: its PID may be another process's now
  read -r p _ <"/proc/$child/task/$child/children" 2>/dev/null
  if [[ -n $p ]]; then kill -KILL "$p" 2>/dev/null; else kill -KILL "$child" 2>/dev/null; fi
}

# A BMC request from `tb ctl`: the action is in ctl/request. The last request wins, also while
# the node is still going down from an earlier one (`tb ctl poweroff; tb ctl poweron` boots it):
# a reset or an on sets the power on whatever the node is doing.
on_request() {
  local r
  r=$(cat "$CTL/request" 2>/dev/null) || return 0
  rm -f "$CTL/request"
  case $r in
    reset)
      power=on
      if [[ -n $child ]]; then reason=reset; kill_node; fi ;;
    off)
      power=off
      if [[ -n $child ]]; then reason=off; kill_node; fi ;;
    on)
      power=on ;;
  esac
}
trap 'stop=1; kill_node' TERM INT
trap on_request USR1

# Packets to a node that is not up are dropped instead of refused when the
# node's down mode is "drop" (nftables set made by `tb up`).
# Deleting is unconditional: the knob may have changed while the node was down.
dropping=0
drop_while_down() { # add|delete
  local mode
  if [[ $1 == add ]]; then
    mode=$(knob down_mode)
    [[ ${mode:-$TB_DOWN_MODE} == drop ]] || return 0
    nft add element inet tb down "{ $TB_ADDR }" 2>/dev/null && dropping=1
  elif ((dropping)); then
    nft delete element inet tb down "{ $TB_ADDR }" 2>/dev/null
    dropping=0
  fi
  return 0
}

# Apply state/pending.conf to current.conf: what the new boot sees.
apply_pending() {
  local k v
  [[ -s $ST/pending.conf ]] || return 0
  (
    flock 8
    while IFS='=' read -r k v; do
      [[ -n $k ]] || continue
      { grep -v "^$k=" "$ST/current.conf"; [[ -z $v ]] || echo "$k=$v"; } >"$ST/current.tmp"
      mv "$ST/current.tmp" "$ST/current.conf"
    done <"$ST/pending.conf"
    ev "applied pending: $(tr '\n' ' ' <"$ST/pending.conf")"
    : >"$ST/pending.conf"
    rm -f "$ST/reboot-required"
  ) 8>"$ST/.state.lock"
}

# Sleep in the background and wait, so that signals are handled at once.
nap() {
  local p
  sleep "$1" &
  p=$!
  wait "$p" 2>/dev/null
  kill "$p" 2>/dev/null   # woken by a signal: do not leave the sleep behind
}

# A time namespace whose CLOCK_BOOTTIME starts near 0: /proc/uptime, uptime -s
# and slurmd's BootTime show the simulated boot (kernel >= 5.6; without one
# the node shows the machine's uptime).
have_timens=0
unshare --time true 2>/dev/null && have_timens=1
timens_args() {
  local up
  ((have_timens)) || return 0
  read -r up _ </proc/uptime
  echo "--time --boottime $((2 - ${up%.*}))"
}

while ((stop == 0)); do
  if [[ $power == on ]]; then
    apply_pending
    rm -f "$CTL/reboot-requested" "$CTL/halt-requested"
    reason=
    drop_while_down delete
    status booting
    # shellcheck disable=SC2046  # timens_args is a list of words on purpose
    unshare --pid --fork --kill-child=SIGKILL --mount-proc --mount --uts \
      $(timens_args) --propagation private \
      /bin/bash "$TB_HOME/node/init.sh" "$ND" >>"$ND/log/init.log" 2>&1 &
    child=$! alive=1
    echo "$child $(starttime "$child")" >"$CTL/unshare.pid"
    # a power-off or stop that arrived between the checks above and the start
    if [[ $power == off ]] || ((stop)); then reason=off; kill_node; fi
    while kill -0 "$child" 2>/dev/null; do wait "$child"; done
    alive=0
    # A test's hold (ctl/hold-down exists): the node is gone and what comes next is not yet
    # decided; ctl/held says the supervisor waits here, so a test can send a request in between.
    if [[ -e $CTL/hold-down ]]; then
      : >"$CTL/held"
      while [[ -e $CTL/hold-down ]] && ((stop == 0)); do nap 0.1; done
      rm -f "$CTL/held"
    fi
    child=
    status down
    drop_while_down add
    ((stop == 0)) || break
    if [[ $reason == off ]]; then
      ev "powered off (BMC)"
    elif [[ $reason == reset ]]; then
      ev "power cycle (BMC)"
    elif [[ -e $CTL/halt-requested ]]; then
      power=off
      ev "halted by the OS; off until tb ctl poweron"
    elif [[ -e $CTL/reboot-requested ]]; then
      if [[ $(knob reboot_hang) == 1 ]]; then
        power=hung
        ev "reboot hangs (reboot_hang=1); down until tb ctl reboot|poweron"
      fi
    else
      ev "node init exited unexpectedly; rebooting"
    fi
  fi
  case $power in
    off | hung)
      status "$power"
      # short naps: a request handled between the test and the nap's start
      # would otherwise wait for the whole nap
      while ((stop == 0)) && [[ $power != on ]]; do nap 0.5; done ;;
    on)
      nap "$TB_DOWNTIME"
      # a power-off requested during the downtime wins
      if [[ $power == off ]]; then continue; fi ;;
  esac
done
status off
