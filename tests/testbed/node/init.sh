#!/bin/bash
# shellcheck disable=SC2153  # TB_NODE & co come from node.env
# PID 1 of one simulated node, started by supervisor.sh in fresh pid, mount,
# uts and time namespaces (inside the testbed's network namespace).
# It builds the node's private view of the filesystem, renders the files that
# come from the node's state (README, "Files rendered from the state"), then
# runs sshd and, with Slurm, slurmd. SIGTERM is "power off": everything in the
# node dies.
#
# Every node boots through here, hundreds at a time on two cores, so it
# prefers bash builtins to extra processes.
set -u
ND=$1
# shellcheck source=/dev/null
. "$ND/node.env" # TB_NODE TB_ADDR TB_RUN TB_HOME TB_SLURMD
trap 'kill -KILL -1 2>/dev/null; exit 0' TERM INT
ST=$ND/state

echo "$TB_NODE" >/proc/sys/kernel/hostname   # this node's own uts namespace

# 1. The run dir and the testbed dir must stay reachable at their own paths.
#    When one lives under /tmp, /root or /run (replaced below), keep it
#    mounted aside and bind it back afterwards.
hidden() { [[ $1/ == /tmp/* || $1/ == /root/* || $1/ == /run/* ]]; }
mount -t tmpfs -o mode=755,size=64m tbrun /run
keep=()
for p in "$TB_RUN" "$TB_HOME"; do hidden "$p" && keep+=("$p"); done
if ((${#keep[@]})); then
  mkdir -p /run/.keep/0 /run/.keep/1
  for i in "${!keep[@]}"; do mount --bind "${keep[i]}" "/run/.keep/$i"; done
fi

# 2. Private, writable copies of the system dirs; the fake tools are the top
#    lower layer of /usr, so they sit at their real paths (/usr/bin/nvidia-smi).
#    Package-owned tools start from the fakes' layer at each boot; step 8 hides
#    the ones whose package is not installed.
rm -f "$ND"/fs/usr/bin/{ofed_info,mlnx_qos,nv-fabricmanager,dpkg-query,dpkg,apt-get,apt-cache,apt-mark,rpm,dnf,grubby,update-grub,grub-set-default,grub-editenv}
mkdir -p "$ND"/fs/{etc,usr,opt,var,.work-etc,.work-usr,.work-opt,.work-var}
for d in etc usr opt var; do
  lower=/$d
  [[ $d == usr ]] && lower=$TB_HOME/fake/usr:/usr
  mount -t overlay "tb-$d" -o "lowerdir=$lower,upperdir=$ND/fs/$d,workdir=$ND/fs/.work-$d" "/$d"
done
# /root: the node's own home (from /etc/skel), never the host's, whose
# .bashrc may run slow init code on every ssh command and which holds secrets.
if [[ ! -d $ND/fs/roothome ]]; then
  mkdir -p "$ND/fs/roothome"
  cp -a /etc/skel/. "$ND/fs/roothome/"
  chmod 700 "$ND/fs/roothome"
fi
mount --bind "$ND/fs/roothome" /root
# /boot: the node's own (GRUB's menu and environment, BLS entries), never the host's.
mkdir -p "$ND/fs/boot"
mount --bind "$ND/fs/boot" /boot
mount -t tmpfs -o mode=1777,size=256m tbtmp /tmp
if ((${#keep[@]})); then
  mkdir -p "${keep[@]}"
  for i in "${!keep[@]}"; do mount --bind "/run/.keep/$i" "${keep[i]}"; done
  umount /run/.keep/*
  rm -rf /run/.keep
fi
mkdir -p /var/lib/tbnode /run/sshd /var/lib/plumb
mount --bind "$ND" /var/lib/tbnode

# shellcheck source=../fake/usr/lib/plumb-tb/lib.sh
. /usr/lib/plumb-tb/lib.sh
st_load
drv=${_ST[driver]:-}

# First boot only: the node starts without the host's sysctl and modprobe
# settings.
if [[ ! -e $ND/fs/.first-boot-done ]]; then
  mkdir -p /etc/sysctl.d /etc/modprobe.d
  rm -f /etc/sysctl.d/*.conf /etc/modprobe.d/*.conf
  printf '# /etc/sysctl.conf - Configuration file for setting system variables\n' >/etc/sysctl.conf
  ln -sfn ../sysctl.conf /etc/sysctl.d/99-sysctl.conf
  # NCCL's system-wide settings as a site image ships them: a line plumb must keep when it
  # pins other keys (modules/nccl_conf).
  printf '# site defaults\nNCCL_DEBUG=WARN\n' >/etc/nccl.conf
  : >"$ND/fs/.first-boot-done"
fi

# 3. A fresh boot id.
read -r boot_id </proc/sys/kernel/random/uuid
# Atomic: the BMC emulator reads the file to see the node boot (a new id is a POST, where
# pending BIOS settings apply), and must never read half of it.
echo "$boot_id" >"$ND/ctl/boot_id.tmp" && mv "$ND/ctl/boot_id.tmp" "$ND/ctl/boot_id"
mount --bind "$ND/ctl/boot_id" /proc/sys/kernel/random/boot_id

# 4. /proc/driver/nvidia/version: /proc is real, so a tmpfs over /proc/driver
#    (in this node's mount namespace only) holds a generated file. Absent when
#    the node has no driver, as on a real machine.
# 5. /sys/module/<module>/{version,parameters/<param>}: a tmpfs over
#    /sys/module with the loaded modules' parameters: state/modparams
#    (defaults) overridden by "options MODULE k=v" lines in the node's
#    /etc/modprobe.d/*.conf, read at boot like a real module load.
mount -t tmpfs -o mode=555,size=1m tbdriver /proc/driver
mount -t tmpfs -o mode=755,size=1m tbmodule /sys/module
declare -A mp=()
while read -r m p v; do [[ -n $m ]] && mp[$m/$p]=$v; done <"$ST/modparams"
for f in /etc/modprobe.d/*.conf; do
  [[ -r $f ]] || continue
  while read -r w m rest; do
    [[ $w == options ]] || continue
    for kv in $rest; do [[ $kv == *=* ]] && mp[$m/${kv%%=*}]=${kv#*=}; done
  done <"$f"
done
dirs=()
[[ -n $drv ]] && dirs+=(/proc/driver/nvidia /sys/module/nvidia)
[[ -n ${_ST[ofed]:-} ]] && dirs+=(/sys/module/mlx5_core)
for k in "${!mp[@]}"; do
  m=${k%%/*}
  [[ $m == nvidia* && -z $drv ]] && continue   # no driver: not loaded
  dirs+=("/sys/module/$m/parameters")
done
mkdir -p "${dirs[@]}"
for k in "${!mp[@]}"; do
  m=${k%%/*}
  [[ -d /sys/module/$m/parameters ]] && printf '%s\n' "${mp[$k]}" >"/sys/module/$m/parameters/${k#*/}"
done
if [[ -n $drv ]]; then
  printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  %s\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04) \n' \
    "$drv" "${_ST[driver_date]:-Tue Mar  5 21:56:49 UTC 2024}" >/proc/driver/nvidia/version
  echo "$drv" >/sys/module/nvidia/version
fi
[[ -n ${_ST[ofed]:-} ]] && echo "${_ST[ofed]%.*}" >/sys/module/mlx5_core/version

# 5b. RoCE netdevs: with roce_ifaces (netdev names) in current.conf, a tmpfs
#     over /sys/class/net holds, for each, what plumb's roce probe reads: type
#     (1, Ethernet), device/driver (-> mlx5_core), ecn/roce_{np,rp}/enable/0-7
#     (1: the driver enables RoCE ECN on every priority), and the state the
#     fake mlnx_qos keeps: qos/trust (pcp) and qos/pfc_en (PFC off). All of it
#     is the NIC's runtime state, so every boot starts from these defaults. The
#     namespace's own netdevs stay, as links into /sys/devices. Without
#     roce_ifaces /sys/class/net is left alone.
if [[ -n ${_ST[roce_ifaces]:-} ]]; then
  real=()
  for l in /sys/class/net/*; do real+=("${l##*/}" "$(readlink "$l")"); done
  mount -t tmpfs -o mode=755,size=1m tbnet /sys/class/net
  for ((i = 0; i < ${#real[@]}; i += 2)); do ln -s "${real[i + 1]}" "/sys/class/net/${real[i]}"; done
  for i in ${_ST[roce_ifaces]}; do
    d=/sys/class/net/$i
    mkdir -p "$d/device" "$d/qos" "$d/ecn/roce_np/enable" "$d/ecn/roce_rp/enable"
    echo 1 >"$d/type"
    ln -s ../../../../bus/pci/drivers/mlx5_core "$d/device/driver"
    echo pcp >"$d/qos/trust"
    echo "0 0 0 0 0 0 0 0" >"$d/qos/pfc_en"
    for p in 0 1 2 3 4 5 6 7; do
      echo 1 >"$d/ecn/roce_np/enable/$p"
      echo 1 >"$d/ecn/roce_rp/enable/$p"
    done
  done
fi

# 6. Runtime sysctls: the defaults, then the persisted files, as systemd-sysctl
#    applies them at boot (/etc/sysctl.d/*.conf in name order; 99-sysctl.conf
#    links /etc/sysctl.conf).
declare -A sc=()
declare -a order=()
while IFS= read -r l; do
  k=${l%% = *}
  [[ -n ${sc[$k]+x} ]] || order+=("$k")
  sc[$k]=${l#* = }
done <"$ST/sysctl.defaults"
for f in /etc/sysctl.d/*.conf; do
  [[ -r $f ]] || continue
  while IFS= read -r l; do
    l=${l%%#*}
    [[ $l == *=* ]] || continue
    k=${l%%=*} v=${l#*=}
    k=${k//[[:space:]]/} v=${v#"${v%%[![:space:]]*}"} v=${v%"${v##*[![:space:]]}"}
    [[ -n ${sc[$k]+x} ]] || order+=("$k")
    sc[$k]=$v
  done <"$f"
done
for k in "${order[@]}"; do printf '%s = %s\n' "$k" "${sc[$k]}"; done >"$ST/sysctl.conf"

# 7. Services: enabled units start at boot, disabled ones do not. The fabric
#    manager fails to start when its version differs from the driver's (as the
#    real one does), and GPU services fail without a driver. Nothing reads the
#    state yet, so it is written in place.
svc="" pm=Disabled
while read -r u en _; do
  [[ -n $u ]] || continue
  act=inactive
  [[ $en == enabled ]] && act=active
  if [[ $act == active && $u == nvidia-* && -z $drv ]]; then act=failed; fi
  if [[ $act == active && $u == nvidia-fabricmanager && ${_ST[fabricmanager]:-} != "$drv" ]]; then act=failed; fi
  # persistence mode is lost at power-off; nvidia-persistenced turns it on
  [[ $u == nvidia-persistenced && $act == active ]] && pm=Enabled
  svc+="$u $en $act"$'\n'
done <"$ST/services"
printf '%s' "$svc" >"$ST/services"
[[ ${_ST[persistence_mode]:-} == "$pm" ]] || st_set "$ST/current.conf" persistence_mode "$pm"

# 8. Files that packages own.
render_os_release
render_cuda
render_boot
hide=()
[[ -n ${_ST[ofed]:-} ]] || hide+=(ofed_info mlnx_qos)
[[ -n ${_ST[fabricmanager]:-} ]] || hide+=(nv-fabricmanager)
pkg_ver datacenter-gpu-manager >/dev/null || pkg_ver datacenter-gpu-manager-4-core >/dev/null || hide+=(dcgmi)
if [[ ${_ST[pkg_format]:-deb} == rpm ]]; then
  hide+=(dpkg-query dpkg apt-get apt-cache apt-mark update-grub grub-set-default grub-editenv)
else
  hide+=(rpm dnf grubby)
fi
tool_hide "${hide[@]}"

ev "boot id=$boot_id kernel=${_ST[kernel]:-} driver=$drv"

# 8b. Units written on the node that run at boot: plumb-roce (the roce module's
#     restore of RoCE QoS), when enabled, runs the script of its own ExecStart
#     line (`/bin/sh -c '<script>'`, systemd's `$$` unescaped), with the tools of
#     step 8 in place.
u=/etc/systemd/system/plumb-roce.service
if [[ $svc == *$'\n'"plumb-roce enabled "* || $svc == "plumb-roce enabled "* ]] && [[ -f $u ]]; then
  x=$(grep -m1 "^ExecStart=/bin/sh -c '" "$u")
  x=${x#*\'} x=${x%\'*}
  if [[ -n $x ]] && /bin/sh -c "${x//\$\$/\$}" >>"$ND/log/plumb-roce.log" 2>&1; then ev "boot: plumb-roce restored"
  else ev "boot: plumb-roce failed"; fi
fi

# 9. Services that make this a node: sshd and, with Slurm, slurmd.
/usr/sbin/sshd -D -f "$ND/sshd_config" -E "$ND/log/sshd.log" &
if [[ ${TB_SLURMD:-0} == 1 ]]; then
  /usr/sbin/slurmd -D -N "$TB_NODE" >>"$ND/log/slurmd.stdout" 2>&1 &
fi
echo up >"$ND/ctl/status.tmp" && mv "$ND/ctl/status.tmp" "$ND/ctl/status"
while :; do
  sleep 3600 &
  wait
done
