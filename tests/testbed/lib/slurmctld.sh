# shellcheck shell=bash
# tb slurmctld stop|start|status: the scheduler's controller going away and coming back, for
# fault tests (a rollout must admit nothing while it cannot read Slurm). Sourced by tb.
#
#   stop     SIGKILL slurmctld (a crash: no clean shutdown); returns once it is gone
#   start    start it again with the testbed's slurm.conf (state is kept in its spool dir);
#            returns once `scontrol ping` answers UP (up to 60 s)
#   status   prints up | down
tb_slurmctld() {
  local action=${1:-}
  tb_require_run
  local pidf=$TB_RUN/pids/slurmctld.pid conf=$TB_RUN/slurm/slurm.conf p
  [[ -f $conf ]] || tb_die "slurmctld: this testbed has no Slurm (tb up N --slurm)"
  case $action in
    stop)
      if tb_pidfile_alive "$pidf"; then
        read -r p _ <"$pidf"
        kill -KILL "$p" 2>/dev/null || true
        for _ in $(seq 100); do tb_pidfile_alive "$pidf" || return 0; sleep 0.1; done
        tb_die "slurmctld: pid $p did not go away"
      fi ;;
    start)
      tb_pidfile_alive "$pidf" && return 0
      tb_spawn slurmctld "$TB_RUN/log/slurmctld.out" env SLURM_CONF="$conf" slurmctld -D
      for _ in $(seq 600); do
        if tb_nsexec env SLURM_CONF="$conf" scontrol ping 2>/dev/null | grep -q 'is UP'; then
          return 0
        fi
        sleep 0.1
      done
      tb_die "slurmctld: not answering 60 s after start" ;;
    status) if tb_pidfile_alive "$pidf"; then echo up; else echo down; fi ;;
    *) tb_die "usage: tb slurmctld stop|start|status" ;;
  esac
}
