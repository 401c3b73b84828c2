# shellcheck shell=bash
# tb ctl ACTION NODE: out-of-band control of a node, like its BMC. Sourced by tb.
#
#   reboot     hard power cycle (no clean shutdown). Off or hung node: boots it.
#              Pending state is applied at the boot. Returns at once.
#   poweroff   hard power off; the node stays off until poweron. No-op when off.
#   poweron    boot an off (or hung) node. No-op when it is on.
#   power      prints On | Off: the PowerState a BMC reports (Off only when off)
#   status     prints up | booting | down | off | hung  (exit 0)
#              (booting/down: powered, OS not serving; hung: a reboot that never
#              returned, reboot_hang=1; a BMC would say PowerState On for all
#              but "off")
#   wait-up    wait up to TB_WAIT_UP seconds (60) until status is up and sshd
#              accepts TCP connections; exit 1 on timeout
#   partition  drop every packet to the node's address (connects time out)
#   heal       undo partition
#   behind-bastion  SSH to the node only through the head node (tb up --head):
#              connects to its port 22 are dropped unless the head's sshd makes
#              them for its bastion user (jump: tbjump@<head address>)
#   direct     undo behind-bastion
#
# Actions are safe to repeat and to call from inside or outside the testbed's
# network namespace, concurrently for different nodes.

tb_ctl() {
  local action=${1:-} node=${2:-}
  [[ -n $action && -n $node ]] || tb_die "usage: tb ctl reboot|poweroff|poweron|power|status|wait-up|partition|heal|behind-bastion|direct NODE"
  tb_require_run
  tb_require_node "$node"
  local nd=$TB_RUN/nodes/$node addr
  addr=$(tb_node_addr "$node")
  case $action in
    reboot) tb_ctl_request "$node" reset ;;
    poweroff | off) tb_ctl_request "$node" off ;;
    poweron | on) tb_ctl_request "$node" on ;;
    status) cat "$nd/ctl/status" ;;
    power) if [[ $(<"$nd/ctl/status") == off ]]; then echo Off; else echo On; fi ;;
    wait-up)
      local end=$((SECONDS + ${TB_WAIT_UP:-60}))
      while ((SECONDS < end)); do
        if [[ $(<"$nd/ctl/status") == up ]] &&
          tb_nsexec timeout 2 bash -c "exec 3<>/dev/tcp/$addr/22" 2>/dev/null; then
          return 0
        fi
        sleep 0.1
      done
      echo "tb ctl: $node not up after ${TB_WAIT_UP:-60} s (status $(<"$nd/ctl/status"))" >&2
      return 1 ;;
    partition) tb_nsexec nft add element inet tb cut "{ $addr }" ;;
    heal) tb_nsexec nft delete element inet tb cut "{ $addr }" 2>/dev/null || true ;;
    behind-bastion) tb_nsexec nft add element inet tb bastioned "{ $addr }" ;;
    direct) tb_nsexec nft delete element inet tb bastioned "{ $addr }" 2>/dev/null || true ;;
    *) tb_die "ctl: unknown action '$action'" ;;
  esac
}

# Hand a power request to the node's supervisor: write it, then SIGUSR1. A
# lock serialises concurrent requests for one node; the supervisor consumes
# the file, so the next request waits until it has.
tb_ctl_request() { # NODE reset|off|on
  local nd=$TB_RUN/nodes/$1 pidf=$TB_RUN/pids/node-$1.pid p
  tb_pidfile_alive "$pidf" || tb_die "ctl: the supervisor of $1 is not running"
  read -r p _ <"$pidf"
  (
    flock 9
    echo "$2" >"$nd/ctl/request.tmp"
    mv "$nd/ctl/request.tmp" "$nd/ctl/request"
    kill -USR1 "$p"
    # the supervisor takes it within milliseconds, seconds on a machine
    # loaded far beyond its cores; a request never taken is withdrawn, so
    # that it cannot act later, out of order
    for _ in $(seq 600); do
      [[ -e $nd/ctl/request ]] || exit 0
      sleep 0.05
    done
    rm -f "$nd/ctl/request"
    echo "tb ctl: the supervisor of $1 did not take the request within 30 s" >&2
    exit 1
  ) 9>"$nd/ctl/.request.lock"
}
