# shellcheck shell=bash disable=SC2153  # TB_NET & co come from common.sh
# tb up N [--slurm] [--head] [--no-wait]: start a testbed. Sourced by tb.

tb_up() {
  local n="" slurm=0 head=0 wait=1 a
  for a in "$@"; do
    case $a in
      --slurm) slurm=1 ;;
      --head) head=1 ;;
      --no-wait) wait=0 ;;
      [0-9]*) n=$a ;;
      *) tb_die "up: unknown argument '$a'" ;;
    esac
  done
  [[ $n =~ ^[0-9]+$ && $n -ge 1 && $n -le 2000 ]] || tb_die "usage: tb up N [--slurm] [--head] [--no-wait] (1 <= N <= 2000)"
  [[ $(id -u) == 0 ]] || tb_die "up: needs root (namespaces, mounts)"
  local t0 tool
  t0=$(tb_now_ms)
  for tool in sshd ssh-keygen unshare nsenter ip ss; do
    command -v "$tool" >/dev/null || [[ -x /usr/sbin/$tool ]] || tb_die "up: '$tool' is missing (scripts/install-deps.sh)"
  done
  if ((slurm)); then
    for tool in slurmctld slurmd munged sinfo; do
      command -v "$tool" >/dev/null || [[ -x /usr/sbin/$tool ]] || tb_die "up: '$tool' is missing (scripts/install-deps.sh)"
    done
  fi

  if [[ -z ${TB_RUN_GIVEN:-} ]]; then
    TB_RUN=$(mktemp -d "${TMPDIR:-/tmp}/plumb-tb.XXXXXX")
    ln -sfn "$TB_RUN" "$TB_LAST_LINK"
  fi
  TB_RUN=$(readlink -m "$TB_RUN")
  # Nodes overlay these dirs; an overlay's upper dir must not be inside its
  # lower dir, so the run dir cannot live under them.
  case $TB_RUN/ in
    /etc/* | /usr/* | /opt/* | /root/* | /var/* | /run/*)
      tb_die "up: TB_RUN must not be under /etc /usr /opt /root /var /run (nodes overlay them)" ;;
  esac
  [[ ! -e $TB_RUN/pids ]] || tb_die "up: $TB_RUN is in use; run 'tb down' first"
  # The run dir holds ~60 small files per node, written and deleted in bulk:
  # on a busy disk deleting 256 nodes' worth took over a minute. An empty
  # run dir therefore gets its own tmpfs (TB_TMPFS=0: plain directory).
  mkdir -p "$TB_RUN"
  if [[ ${TB_TMPFS:-1} == 1 && -z $(ls -A "$TB_RUN") && $(stat -f -c %T "$TB_RUN") != tmpfs ]]; then
    mount -t tmpfs -o "mode=755,size=${TB_TMPFS_SIZE:-4g}" plumb-tb "$TB_RUN" &&
      echo "tmpfs mounted by tb up; tb down unmounts it" >"$TB_RUN/.tmpfs"
  fi
  mkdir -p "$TB_RUN"/{pids,client,nodes,jobs,log,cluster}
  chmod 755 "$TB_RUN"
  mkdir -p /var/lib/tbnode   # mount point inside nodes; stays empty on the host

  tb_up_netns
  tb_up_client
  # the defaults, read once for all nodes
  TB_CLIENT_PUB=$(<"$TB_RUN/client/id_ed25519.pub")
  TB_DEFAULT_CURRENT=$(<"$TB_HOME/defaults/current.conf")
  declare -gA TB_DEFAULT_FILES=()
  for a in packages repo sysctl.defaults services modparams; do
    TB_DEFAULT_FILES[$a]=$(<"$TB_HOME/defaults/$a")
  done
  local names=() i
  for ((i = 1; i <= n; i++)); do names+=("n$i"); done
  ((head)) && names+=(head)
  i=0
  for a in "${names[@]}"; do
    i=$((i + 1))
    tb_up_node "$a" "$i" "$slurm"
  done
  local t_prep
  t_prep=$(tb_now_ms)
  ((slurm)) && tb_up_slurm "${names[@]}"
  for a in "${names[@]}"; do
    tb_spawn "node-$a" "$TB_RUN/nodes/$a/log/supervisor.log" "$TB_HOME/node/supervisor.sh" "$TB_RUN/nodes/$a"
  done
  tb_up_env "$slurm"
  tb_up_inventory
  echo "$n $slurm $head" >"$TB_RUN/shape"

  local want=${#names[@]} got=0 idle=0 t_sshd t_end
  if ((wait)); then
    for _ in $(seq 600); do
      got=$( (tb_nsexec ss -Hltn 'sport = :22' || true) | wc -l)
      ((got >= want)) && break
      sleep 0.1
    done
    t_sshd=$(tb_now_ms)
    if ((slurm)); then
      for _ in $(seq 600); do
        idle=$( (SLURM_CONF=$TB_RUN/slurm/slurm.conf tb_nsexec sinfo -h -N -t idle -o %N 2>/dev/null || true) | sort -u | wc -l)
        ((idle >= n)) && break
        sleep 0.2
      done
    fi
    t_end=$(tb_now_ms)
    echo "tb up: $n nodes$( ((slurm)) && echo ' + slurm')$( ((head)) && echo ' + head'): sshd $got/$want listening, prep $((t_prep - t0)) ms, sshd $((t_sshd - t0)) ms, total $((t_end - t0)) ms" >&2
    ((got >= want)) || tb_die "up: only $got of $want sshd listen (see $TB_RUN/nodes/*/log)"
    ((slurm == 0 || idle >= n)) || tb_die "up: only $idle of $n Slurm nodes idle (see $TB_RUN/slurm/log)"
  fi
  echo "export TB_RUN=$TB_RUN"
}

# One private network namespace per testbed: named (tb-<run>, the default)
# or the current one when TB_NETNS is empty and we run under `unshare --net`.
tb_up_netns() {
  TB_NETNS=${TB_NETNS-tb-$(basename "$TB_RUN")}
  if [[ -n $TB_NETNS ]]; then
    ip netns add "$TB_NETNS" || tb_die "up: cannot create network namespace $TB_NETNS"
    echo "$TB_NETNS" >"$TB_RUN/netns"
  elif [[ $(readlink /proc/self/ns/net) == "$(readlink /proc/1/ns/net)" ]]; then
    tb_die "up: TB_NETNS is empty but this is the machine's network namespace; run under 'unshare --net'"
  fi
  tb_nsexec ip link set lo up
  # glibc getaddrinfo(AI_ADDRCONFIG), which Slurm uses, finds no IPv4 address
  # in a namespace whose only one is 127.0.0.1 and then cannot resolve even
  # "127.0.0.1". Any second IPv4 address on lo fixes it.
  tb_nsexec ip addr replace "$TB_NET.$TB_EXTRA_ADDR_SUFFIX/32" dev lo
  # Packets to addresses in these sets are dropped, so connects time out:
  # "down" is managed by the node supervisors (down mode drop), "cut" by
  # `tb ctl partition|heal`.
  if command -v nft >/dev/null; then
    tb_nsexec nft -f - <<NFT || echo "tb: nftables unavailable; partition and down mode drop will not work" >&2
table inet tb {
  set down { type ipv4_addr; }
  set cut { type ipv4_addr; }
  set bastioned { type ipv4_addr; }
  chain in {
    type filter hook input priority 0;
    ip daddr @down drop
    ip daddr @cut drop
  }
  chain out {
    type filter hook output priority 0;
    ip daddr @bastioned tcp dport 22 meta skuid != $TB_JUMP_UID drop
  }
}
NFT
  fi
}

# The client side for the tool under test: key, known_hosts, ssh_config, nodes.txt.
tb_up_client() {
  local c=$TB_RUN/client
  ssh-keygen -q -t ed25519 -N '' -C plumb-testbed-client -f "$c/id_ed25519"
  cat >"$c/ssh_config" <<CONF
# Generated by tb up. ssh -F $c/ssh_config n1
Host *
  User root
  IdentityFile $c/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $c/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 5
  LogLevel ERROR
  # OpenSSH's default post-quantum kex costs ~70 ms of client CPU per
  # connection; curve25519 ~10 ms. It matters with hundreds of nodes.
  KexAlgorithms curve25519-sha256,curve25519-sha256@libssh.org
CONF
  : >"$c/known_hosts"
  : >"$c/nodes.txt"
  ln -sfn client/nodes.txt "$TB_RUN/nodes.txt"
}

# One node's directory: host key, sshd_config, state files. NAME INDEX SLURM
tb_up_node() {
  local name=$1 i=$2 slurmd=$3 nd=$TB_RUN/nodes/$1 addr
  addr=$(tb_addr "$i")
  if [[ $name == head ]]; then addr=$TB_NET.$TB_HEAD_ADDR_SUFFIX slurmd=0; fi
  if [[ $name == head ]]; then
    # The bastion user, in the head's own /etc (its overlay's upper layer) only.
    mkdir -p "$nd/fs/etc"
    { cat /etc/passwd; echo "$TB_JUMP_USER:x:$TB_JUMP_UID:$TB_JUMP_UID:testbed bastion:/tmp:/bin/sh"; } >"$nd/fs/etc/passwd"
  fi
  # (hundreds of nodes on two cores: builtins where they do)
  mkdir -p "$nd"/{state,ctl,log,ssh,fs/etc/slurm}
  ssh-keygen -q -t ed25519 -N '' -C "root@$name" -f "$nd/ssh/ssh_host_ed25519_key"
  echo "$TB_CLIENT_PUB" >"$nd/ssh/authorized_keys"
  cat >"$nd/node.env" <<ENV
TB_NODE=$name
TB_ADDR=$addr
TB_RUN=$TB_RUN
TB_HOME=$TB_HOME
TB_SLURMD=$slurmd
TB_DOWNTIME=$TB_DOWNTIME
TB_DOWN_MODE=$TB_DOWN_MODE
ENV
  cat >"$nd/sshd_config" <<CONF
ListenAddress $addr:22
HostKey $nd/ssh/ssh_host_ed25519_key
PidFile /run/sshd.pid
AuthorizedKeysFile $nd/ssh/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
MaxStartups 200:30:400
MaxSessions 64
Subsystem sftp internal-sftp
LogLevel ERROR
CONF
  local f key
  printf 'hostname=%s\n%s\n' "$name" "$TB_DEFAULT_CURRENT" >"$nd/state/current.conf"
  for f in packages repo sysctl.defaults services modparams; do
    printf '%s\n' "${TB_DEFAULT_FILES[$f]}" >"$nd/state/$f"
  done
  : >"$nd/state/pending.conf"
  : >"$nd/state/events.log"
  echo down >"$nd/ctl/status"
  echo "$name" >"$nd/fs/etc/hostname"
  if ((slurmd)); then
    # slurmd reads gres.conf from the directory of slurm.conf
    ln -s "$TB_RUN/slurm/slurm.conf" "$nd/fs/etc/slurm/slurm.conf"
    ln -s "$TB_RUN/slurm/gres.conf" "$nd/fs/etc/slurm/gres.conf"
  fi
  read -r f key _ <"$nd/ssh/ssh_host_ed25519_key.pub"
  echo "$name,$addr $f $key" >>"$TB_RUN/client/known_hosts"
  printf 'Host %s\n  HostName %s\n' "$name" "$addr" >>"$TB_RUN/client/ssh_config"
  echo "$name $addr 22" >>"$TB_RUN/client/nodes.txt"
}

# munged, slurm.conf, gres.conf, slurmctld. NAMES...
tb_up_slurm() {
  local s=$TB_RUN/slurm i=0 name
  mkdir -p "$s"/{ctld,log,spool,munge-key,munge-run,fakedev}
  chmod 700 "$s/munge-key"
  chmod 755 "$s/munge-run"   # munged wants its socket dir o+x
  # ...and every directory above it searchable by all (mktemp -d makes 0700 dirs): say so now
  # rather than let munged exit and Slurm wait for nodes that can never authenticate.
  local dir=$s
  while [[ $dir != / ]]; do
    dir=$(dirname "$dir")
    [[ $(( 0$(stat -c %a "$dir") & 1 )) -eq 1 ]] ||
      tb_die "up: munged needs every directory above its socket searchable by all; $dir is not (hint: chmod o+x $dir)"
  done
  dd if=/dev/urandom of="$s/munge-key/munge.key" bs=1024 count=1 status=none
  chmod 400 "$s/munge-key/munge.key"
  tb_spawn munged "$TB_RUN/log/munged.out" \
    munged -F --socket="$s/munge-run/munge.sock" --key-file="$s/munge-key/munge.key" \
    --pid-file="$s/munge-run/munged.pid" --log-file="$s/log/munged.log" \
    --seed-file="$s/munge-key/munged.seed" --num-threads=4
  {
    cat <<CONF
# Generated by tb up.
ClusterName=tb
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$TB_SLURMCTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$s/munge-run/munge.sock
CredType=cred/munge
StateSaveLocation=$s/ctld
SlurmdSpoolDir=$s/spool/%n
SlurmctldPidFile=$s/ctld/slurmctld.pid
SlurmdPidFile=$s/spool/%n/slurmd.pid
SlurmctldLogFile=$s/log/slurmctld.log
SlurmdLogFile=$s/log/slurmd-%n.log
# accept the configured CPUs/RealMemory on a small machine
SlurmdParameters=config_overrides
ProctrackType=proctrack/pgid
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# without it a job takes all of a node's memory and jobs serialize
DefMemPerCPU=1000
SchedulerType=sched/backfill
GresTypes=gpu
ReturnToService=2
RebootProgram=/usr/sbin/reboot
ResumeTimeout=60
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=30
KillWait=5
Waittime=0
CONF
    for name in "$@"; do
      i=$((i + 1))
      [[ $name == head ]] && continue
      # slurmd binds 0.0.0.0:Port, so each node of the shared netns needs its own port
      echo "NodeName=$name NodeHostname=$name NodeAddr=$(tb_addr "$i") Port=$((TB_SLURMD_PORT_BASE + i)) CPUs=16 RealMemory=64000 Gres=gpu:8 State=UNKNOWN"
    done
    echo "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } >"$s/slurm.conf"
  # gres/gpu needs File= naming character devices; clones of /dev/null do.
  for i in 0 1 2 3 4 5 6 7; do mknod "$s/fakedev/nvidia$i" c 1 3; done
  echo "Name=gpu File=$s/fakedev/nvidia[0-7]" >"$s/gres.conf"
  for name in "$@"; do
    [[ $name == head ]] && continue
    mkdir -p "$s/spool/$name"
  done
  # the head node runs scontrol & co over ssh
  [[ -d $TB_RUN/nodes/head ]] && ln -sfn "$s/slurm.conf" "$TB_RUN/nodes/head/fs/etc/slurm/slurm.conf"
  for _ in $(seq 50); do
    [[ -S $s/munge-run/munge.sock ]] && break
    sleep 0.1
  done
  [[ -S $s/munge-run/munge.sock ]] ||
    tb_die "up: munged did not start: $(tail -n 2 "$TB_RUN/log/munged.out" 2>/dev/null | tr '\n' ' ')"
  tb_spawn slurmctld "$TB_RUN/log/slurmctld.out" env SLURM_CONF="$s/slurm.conf" slurmctld -D
}

# $TB_RUN/env.sh: what `tb exec` and tests source.
tb_up_env() {
  {
    echo "export TB_RUN=$TB_RUN"
    echo "export TB_NETNS=$TB_NETNS"
    echo "export TB_HOME=$TB_HOME"
    echo "export TB_SSH_CONFIG=$TB_RUN/client/ssh_config"
    if (($1)); then echo "export SLURM_CONF=$TB_RUN/slurm/slurm.conf"; fi
  } >"$TB_RUN/env.sh"
}

# $TB_RUN/cluster/inventory.yaml: a cluster-repo inventory for the nodes
# (docs: README "The generated inventory"). Topology: 4 nodes per NVLink
# domain, 8 per rack, 16 per leaf switch.
tb_up_inventory() {
  local name addr port i=0
  {
    echo "# Generated by tb up for the testbed in $TB_RUN."
    echo "cluster: testbed"
    echo "defaults:"
    echo "  ssh: { user: root, port: 22, known_hosts: $TB_RUN/client/known_hosts,"
    echo "         identity: $TB_RUN/client/id_ed25519, connect_timeout: 5s, command_timeout: 2m }"
    echo "nodes:"
    while read -r name addr port; do
      [[ $name == head ]] && continue
      i=$((i + 1))
      printf '  - { name: %s, address: %s, ssh_port: %s, rack: r%02d, leaf: leaf%02d, nvlink_domain: nvl%02d, groups: [gpu] }\n' \
        "$name" "$addr" "$port" $(((i + 7) / 8)) $(((i + 15) / 16)) $(((i + 3) / 4))
    done <"$TB_RUN/client/nodes.txt"
    echo "groups:"
    echo "  gpu: {}"
  } >"$TB_RUN/cluster/inventory.yaml"
}
