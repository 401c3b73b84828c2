#!/bin/bash
# shellcheck disable=SC2153  # TB_NODE & co come from node.env
# PID 1 of one simulated node, started by supervisor.sh in fresh pid, mount,
# uts and time namespaces (inside the testbed's network namespace).
# It builds the node's private view of the filesystem, renders the files that
# come from the node's state (see README, "State-driven files"), then runs sshd
# and, with Slurm, slurmd. SIGTERM is "power off": everything in the node dies.
set -u
ND=$1
# shellcheck source=/dev/null
. "$ND/node.env" # TB_NODE TB_ADDR TB_RUN TB_HOME TB_SLURMD
trap 'kill -KILL -1 2>/dev/null; exit 0' TERM INT
ST=$ND/state

hostname "$TB_NODE"

# 1. Keep the run dir and the testbed dir reachable at their own paths after
#    /tmp, /root etc. are replaced below (either may live under one of them).
mount -t tmpfs -o mode=755,size=64m tbrun /run
mkdir -p /run/.keep/run /run/.keep/home
mount --bind "$TB_RUN" /run/.keep/run
mount --bind "$TB_HOME" /run/.keep/home

# 2. Private, writable copies of the system dirs; the fake tools are the top
#    lower layer of /usr, so they sit at their real paths (/usr/bin/nvidia-smi).
# Package-owned tools start from the fakes' layer at each boot; step 8 hides
# the ones whose package is not installed.
rm -f "$ND/fs/usr/bin/ofed_info" "$ND/fs/usr/bin/nv-fabricmanager"
for d in etc usr opt var; do
  lower=/$d
  [[ $d == usr ]] && lower=$TB_HOME/fake/usr:/usr
  mkdir -p "$ND/fs/$d" "$ND/fs/.work-$d"
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
mount -t tmpfs -o mode=1777,size=256m tbtmp /tmp
mkdir -p "$TB_RUN" "$TB_HOME"
mount --bind /run/.keep/run "$TB_RUN"
mount --bind /run/.keep/home "$TB_HOME"
umount /run/.keep/run /run/.keep/home
rm -rf /run/.keep
mkdir -p /var/lib/tbnode && mount --bind "$ND" /var/lib/tbnode
mkdir -p /run/sshd /var/lib/plumb && chmod 755 /run/sshd

# shellcheck source=../fake/usr/lib/plumb-tb/lib.sh
. /usr/lib/plumb-tb/lib.sh
st_load

# First boot only: the node starts without the host's sysctl settings.
if [[ ! -e $ND/fs/.first-boot-done ]]; then
  mkdir -p /etc/sysctl.d /etc/modprobe.d
  rm -f /etc/sysctl.d/*.conf /etc/modprobe.d/*.conf
  printf '# /etc/sysctl.conf - Configuration file for setting system variables\n' >/etc/sysctl.conf
  ln -sfn ../sysctl.conf /etc/sysctl.d/99-sysctl.conf
  : >"$ND/fs/.first-boot-done"
fi

# 3. A fresh boot id.
cat /proc/sys/kernel/random/uuid >"$ND/ctl/boot_id"
mount --bind "$ND/ctl/boot_id" /proc/sys/kernel/random/boot_id

# 4. /proc/driver/nvidia/version: /proc is real, so a tmpfs over /proc/driver
#    (in this node's mount namespace only) holds a generated file. Absent when
#    the node has no driver, as on a real machine.
mount -t tmpfs -o mode=555,size=1m tbdriver /proc/driver
if [[ -n ${_ST[driver]:-} ]]; then
  mkdir -p /proc/driver/nvidia
  printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  %s\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04) \n' \
    "${_ST[driver]}" "${_ST[driver_date]:-Tue Mar  5 21:56:49 UTC 2024}" >/proc/driver/nvidia/version
fi

# 5. /sys/module/<module>/{version,parameters/<param>}: a tmpfs over /sys/module
#    with the loaded modules' parameters: state/modparams (defaults) overridden
#    by "options MODULE k=v" lines in the node's /etc/modprobe.d/*.conf, read at
#    boot like a real module load.
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
for k in "${!mp[@]}"; do
  m=${k%%/*}
  [[ $m == nvidia* && -z ${_ST[driver]:-} ]] && continue   # no driver: not loaded
  mkdir -p "/sys/module/$m/parameters"
  printf '%s\n' "${mp[$k]}" >"/sys/module/$m/parameters/${k#*/}"
done
if [[ -n ${_ST[driver]:-} ]]; then
  mkdir -p /sys/module/nvidia && echo "${_ST[driver]}" >/sys/module/nvidia/version
fi
[[ -n ${_ST[ofed]:-} ]] && mkdir -p /sys/module/mlx5_core && echo "${_ST[ofed]%.*}" >/sys/module/mlx5_core/version

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
#    real one does), and GPU services fail without a driver.
while read -r u en _; do
  [[ -n $u ]] || continue
  act=inactive
  [[ $en == enabled ]] && act=active
  if [[ $act == active && $u == nvidia-* && -z ${_ST[driver]:-} ]]; then act=failed; fi
  if [[ $act == active && $u == nvidia-fabricmanager && ${_ST[fabricmanager]:-} != "${_ST[driver]:-}" ]]; then act=failed; fi
  echo "$u $en $act"
done <"$ST/services" >"$ST/services.tmp" && mv "$ST/services.tmp" "$ST/services"
# Persistence mode is lost at power-off; nvidia-persistenced turns it on.
pm=Disabled
grep -q '^nvidia-persistenced [a-z]* active$' "$ST/services" && pm=Enabled
st_set "$ST/current.conf" persistence_mode "$pm"

# 8. Files that packages own.
render_os_release
render_cuda
[[ -n ${_ST[ofed]:-} ]] || tool_hide ofed_info
[[ -n ${_ST[fabricmanager]:-} ]] || tool_hide nv-fabricmanager

ev "boot id=$(<"$ND/ctl/boot_id") kernel=$(st_get kernel) driver=$(st_get driver)"

# 9. Services that make this a node: sshd and, with Slurm, slurmd.
/usr/sbin/sshd -D -f "$ND/sshd_config" -E "$ND/log/sshd.log" &
if [[ ${TB_SLURMD:-0} == 1 ]]; then
  /usr/sbin/slurmd -D -N "$TB_NODE" >>"$ND/log/slurmd.stdout" 2>&1 &
fi
echo up >"$ND/ctl/status"
while :; do
  sleep 3600 &
  wait
done
