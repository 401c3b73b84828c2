#!/usr/bin/env bash
# shellcheck disable=SC2016  # remote commands are single-quoted on purpose
# The testbed's own test: a 4-node testbed with Slurm and a head node. Every
# fake tool's output is checked against the node's state files; reboots give a
# new boot_id and apply pending state; faults (apt failure, dpkg lock, NVML
# mismatch, partition, power off, hung reboot) behave as documented; drain and
# resume go through real Slurm; a change while a job runs logs a VIOLATION;
# `tb down` leaves no process behind. Prints "N passed, N failed".
set -uo pipefail
src=${PLUMB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
TB=$src/tests/testbed/tb
export TB_RUN=${TB_RUN:-$(mktemp -d "${TMPDIR:-/tmp}/plumb-tb-selftest.XXXXXX")}
export TB_DOWNTIME=${TB_DOWNTIME:-1}
pass=0 fail=0
check() { # DESCRIPTION CMD...: one check
  local d=$1
  shift
  if "$@"; then pass=$((pass + 1)); echo "PASS: $d"; else fail=$((fail + 1)); echo "FAIL: $d"; fi
}
eq() { # A B: equal, or say how they differ
  [[ $1 == "$2" ]] && return 0
  printf '    got:  %q\n    want: %q\n' "$1" "$2"
  return 1
}
cleanup() { "$TB" down >/dev/null 2>&1; }
trap cleanup EXIT

t0=$SECONDS
if ! "$TB" up 4 --slurm --head >/dev/null; then
  echo "FAIL: tb up"
  echo "0 passed, 1 failed"
  exit 1
fi
# shellcheck source=/dev/null
. "$TB_RUN/env.sh"
X() { "$TB" exec "$@"; }
S() { "$TB" exec ssh -F "$TB_SSH_CONFIG" "$@"; }
st() { sed -n "s/^$2=//p" "$TB_RUN/nodes/$1/state/${3:-current.conf}" | tail -1; }
ns_inode=$(stat -L -c %i "/run/netns/$TB_NETNS")
echo "testbed up in $((SECONDS - t0)) s: $TB_RUN"

# --- access ------------------------------------------------------------------
check "ssh with StrictHostKeyChecking reaches each node under its own name" \
  eq "$(for n in n1 n2 n3 n4 head; do S "$n" hostname; done | xargs)" "n1 n2 n3 n4 head"
check "each node has its own ed25519 host key" \
  eq "$(awk '{print $3}' "$TB_RUN/client/known_hosts" | sort -u | wc -l)" 5
check "a node presenting another node's key is rejected" \
  bash -c "! '$TB' exec ssh -F '$TB_SSH_CONFIG' -o HostKeyAlias=n2 n1 true 2>/dev/null"
check "nodes.txt maps n1..n4 to 127.10.0.2..5 port 22" \
  eq "$(grep -v head "$TB_RUN/client/nodes.txt" | xargs)" "n1 127.10.0.2 22 n2 127.10.0.3 22 n3 127.10.0.4 22 n4 127.10.0.5 22"
check "inventory.yaml lists the 4 nodes with absolute ssh paths" \
  eq "$(grep -c 'name: n[0-9]' "$TB_RUN/cluster/inventory.yaml")/$(grep -c "known_hosts: $TB_RUN/client/known_hosts" "$TB_RUN/cluster/inventory.yaml")" "4/1"

# lib.sh loads lib-more.sh on the first call of one of its functions (a stub per name): a
# function missing from the list would be "command not found" in a fake that did not load the
# file yet, and a listed name lib-more.sh does not define would call its stub forever.
lib_more_listed() {
  local lib=$src/tests/testbed/fake/usr/lib/plumb-tb defined listed f rc=0
  defined=$(sed -n 's/^\([a-z_][a-z_0-9]*\)() .*/\1/p' "$lib/lib-more.sh" | sort)
  # shellcheck disable=SC2016  # expanded by the inner shell
  listed=$(bash -c '. "$1/lib.sh" && printf "%s\n" "${TB_LIB_MORE_FUNCS[@]}"' _ "$lib" | sort)
  for f in $(comm -23 <(echo "$defined") <(echo "$listed")); do echo "     $f: in lib-more.sh, not in TB_LIB_MORE_FUNCS"; rc=1; done
  for f in $(comm -13 <(echo "$defined") <(echo "$listed")); do echo "     $f: in TB_LIB_MORE_FUNCS, not in lib-more.sh"; rc=1; done
  [[ -n $defined ]] && return $rc
}
check "every function of the fakes' lib-more.sh is loaded on first use, and only those" lib_more_listed

# --- every fake against the state files (n1) ------------------------------------
out=$(S n1 'uname -r; uname -a; . /etc/os-release; echo "$VERSION_ID|$PRETTY_NAME"')
mapfile -t o <<<"$out"
check "uname -r is the state's kernel" eq "${o[0]}" "$(st n1 kernel)"
check "uname -a carries hostname, kernel and build" \
  eq "${o[1]}" "Linux n1 $(st n1 kernel) $(st n1 kernel_build) x86_64 x86_64 x86_64 GNU/Linux"
check "/etc/os-release follows the state" eq "${o[2]}" "$(st n1 os_version_id)|$(st n1 os_pretty_name)"

q=$(S n1 nvidia-smi --query-gpu=index,driver_version,persistence_mode,name,uuid,pci.bus_id,memory.total,vbios_version --format=csv,noheader)
check "nvidia-smi --query-gpu: one row per GPU" eq "$(wc -l <<<"$q")" "$(st n1 gpu_count)"
check "nvidia-smi --query-gpu: driver, persistence, name, memory, vbios from the state" \
  eq "$(cut -d, -f2,3,4,7,8 <<<"$q" | sort -u)" \
  " $(st n1 driver), $(st n1 persistence_mode), $(st n1 gpu_name), $(st n1 gpu_mem_mib) MiB, $(st n1 gpu_vbios)"
check "nvidia-smi header line with units" \
  eq "$(S n1 nvidia-smi --query-gpu=name,memory.total --format=csv | head -1)" "name, memory.total [MiB]"
check "nvidia-smi -L lists the same UUIDs" \
  eq "$(S n1 nvidia-smi -L | sed 's/.*UUID: \(.*\))/\1/' | xargs)" "$(cut -d, -f5 <<<"$q" | xargs)"
check "nvidia-smi -q shows driver, CUDA and persistence" \
  eq "$(S n1 nvidia-smi -q | grep -E '^(Driver|CUDA) Version|^    Persistence Mode' | awk '!seen[$0]++' | sed 's/  */ /g' | xargs)" \
  "Driver Version : $(st n1 driver) CUDA Version : 12.2 Persistence Mode : $(st n1 persistence_mode)"
check "nvidia-smi table shows the driver" bash -c "'$TB' exec ssh -F '$TB_SSH_CONFIG' n1 nvidia-smi | grep -q 'Driver Version: $(st n1 driver) '"
check "/proc/driver/nvidia/version and modinfo agree with the driver" \
  eq "$(S n1 'grep -o "Module  [0-9.]*" /proc/driver/nvidia/version; modinfo -F version nvidia' | xargs)" "Module $(st n1 driver) $(st n1 driver)"
check "/sys/module/nvidia/parameters from state/modparams" \
  eq "$(S n1 cat /sys/module/nvidia/parameters/NVreg_EnableStreamMemOPs)" "$(awk '$2=="NVreg_EnableStreamMemOPs" {print $3}' "$TB_RUN/nodes/n1/state/modparams")"
check "dpkg-query -W lists exactly state/packages" \
  eq "$(S n1 "dpkg-query -W -f='\${Package} \${Version}\n'")" "$(cat "$TB_RUN/nodes/n1/state/packages")"
check "dpkg-query -s and -l of libnccl2 (NCCL)" \
  eq "$(S n1 'dpkg-query -s libnccl2 | grep -E "^(Status|Version)"; dpkg-query -l libnccl2 | tail -1 | cut -c1-4' | xargs)" \
  "Status: install ok installed Version: $(awk '$1=="libnccl2" {print $2}' "$TB_RUN/nodes/n1/state/packages") ii"
check "a deb node has dpkg-query and apt-get, no rpm or dnf" \
  eq "$(S n1 'for t in dpkg-query apt-get rpm dnf; do command -v $t || echo no-$t; done' | xargs)" "/usr/bin/dpkg-query /usr/bin/apt-get no-rpm no-dnf"
check "apt-cache madison lists the repo's versions, newest first" \
  eq "$(S n1 apt-cache madison libnccl2 | cut -d'|' -f1,2 | xargs)" "libnccl2 | 2.21.5-1+cuda12.4 libnccl2 | 2.19.3-1+cuda12.2"
check "ofed_info -s" eq "$(S n1 ofed_info -s)" "MLNX_OFED_LINUX-$(st n1 ofed):"
ib=$(S n1 ibstat)
check "ibstat: every CA with the state's state, rate and firmware" \
  eq "$(grep -c "State: $(st n1 ib_state)" <<<"$ib")/$(grep -c "Rate: $(st n1 ib_rate)" <<<"$ib")/$(grep -c "Firmware version: $(st n1 ib_fw)" <<<"$ib")" \
  "$(st n1 ib_count)/$(st n1 ib_count)/$(st n1 ib_count)"
check "ibv_devinfo: PORT_ACTIVE and MTU 4096" eq "$(S n1 ibv_devinfo -d mlx5_0 | grep -E 'state:|active_mtu:' | xargs)" "state: PORT_ACTIVE (4) active_mtu: 4096 (5)"
check "sysctl -n and -a from state/sysctl.defaults" \
  eq "$(S n1 'sysctl -n vm.swappiness; sysctl -a | wc -l')" "$(sed -n 's/^vm.swappiness = //p' "$TB_RUN/nodes/n1/state/sysctl.defaults")
$(wc -l <"$TB_RUN/nodes/n1/state/sysctl.defaults")"
check "systemctl is-enabled/is-active match state/services" \
  eq "$(S n1 'for u in $(cut -d" " -f1 /var/lib/tbnode/state/services); do echo "$u $(systemctl is-enabled $u) $(systemctl is-active $u)"; done')" \
  "$(cat "$TB_RUN/nodes/n1/state/services")"
check "systemctl show -p ActiveState,UnitFileState --value" \
  eq "$(S n1 systemctl show -p ActiveState,UnitFileState --value nvidia-fabricmanager | xargs)" "active enabled"
check "fabric manager, CUDA version.json and nvcc versions" \
  eq "$(S n1 'nv-fabricmanager --version; grep -A2 "\"cuda\" :" /usr/local/cuda/version.json | sed -n "s/.*\"version\" : \"\(.*\)\".*/\1/p"; /usr/local/cuda/bin/nvcc --version | grep release')" \
  "Fabric Manager version is : $(st n1 fabricmanager)
$(st n1 cuda)
Cuda compilation tools, release ${_cuda_mm:=12.2}, V$(st n1 nvcc)"

check "stopping nvidia-persistenced turns persistence mode off; nvidia-smi -pm 1 turns it on" \
  eq "$(S n4 'systemctl stop nvidia-persistenced; nvidia-smi --query-gpu=persistence_mode --format=csv,noheader -i 0; nvidia-smi -pm 1 -i 0 | head -1; nvidia-smi --query-gpu=persistence_mode --format=csv,noheader -i 0')" \
  "$(printf 'Disabled\nEnabled Legacy persistence mode for GPU 00000000:18:00.0.\nEnabled')"

# --- error modes ------------------------------------------------------------------
check "unknown nvidia-smi field: exit 2" bash -c "'$TB' exec ssh -F '$TB_SSH_CONFIG' n2 nvidia-smi --query-gpu=bogus --format=csv >/dev/null; [ \$? = 2 ]"
check "dpkg-query of a missing package: exit 1 and dpkg's message" \
  eq "$(S n2 'dpkg-query -W nope 2>&1; echo rc=$?' | xargs)" "dpkg-query: no packages found matching nope rc=1"
"$TB" state n2 -driver
check "no driver: nvidia-smi exits 9" bash -c "'$TB' exec ssh -F '$TB_SSH_CONFIG' n2 nvidia-smi >/dev/null; [ \$? = 9 ]"
"$TB" state n2 driver=535.161.08

# --- installs, pending state, knobs ----------------------------------------------------
S n1 'apt-get install -y nvidia-driver-550=550.90.07-0ubuntu1 linux-image-5.15.0-119-generic cuda-toolkit-12-4 libnccl2=2.21.5-1+cuda12.4' >/dev/null
check "apt-get install: packages at once, kernel and driver pending" \
  eq "$(S n1 'dpkg-query -W -f="\${Version} " nvidia-driver-550 libnccl2; uname -r; nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0' | xargs)/$(st n1 driver pending.conf)" \
  "550.90.07-0ubuntu1 2.21.5-1+cuda12.4 5.15.0-105-generic 535.161.08/550.90.07"
check "CUDA toolkit install takes effect at once" eq "$(S n1 /usr/local/cuda/bin/nvcc --version | grep -o 'V[0-9][0-9.]*')" "V12.4.131"
"$TB" state n1 nvml_mismatch_on_pending=1
check "nvml_mismatch_on_pending: NVML mismatch (exit 18) until reboot" \
  eq "$(S n1 'nvidia-smi; echo rc=$?' | head -1)/$(S n1 'nvidia-smi -L >/dev/null; echo $?')" "Failed to initialize NVML: Driver/library version mismatch/18"
S n1 'sysctl -qw vm.swappiness=1; echo "vm.max_map_count = 262144" >/etc/sysctl.d/90-tb.conf; echo "options nvidia NVreg_EnableStreamMemOPs=1" >/etc/modprobe.d/nvidia.conf; mkdir -p /var/lib/plumb; echo "{\"commit\":\"abc\"}" >/var/lib/plumb/marker.json'
check "a node's /etc is its own (host untouched)" test ! -e /etc/sysctl.d/90-tb.conf
b0=$(S n1 cat /proc/sys/kernel/random/boot_id)
S n1 reboot
sleep 0.8
check "ssh reboot: the node refuses connections while down" \
  bash -c "! '$TB' exec ssh -F '$TB_SSH_CONFIG' -o ConnectTimeout=2 n1 true 2>/dev/null"
"$TB" ctl wait-up n1 >/dev/null
check "after reboot: new boot_id, pending applied (kernel, driver), short uptime" \
  eq "$(S n1 'cat /proc/sys/kernel/random/boot_id; uname -r; nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0; cut -d. -f1 /proc/uptime' | tail -3 | sed 's/^[0-9]$/short/' | xargs)/$([[ $(S n1 cat /proc/sys/kernel/random/boot_id) != "$b0" ]] && echo new)/$(st n1 driver pending.conf)" \
  "5.15.0-119-generic 550.90.07 short/new/"
check "after reboot: sysctl -w gone, sysctl.d applied, modprobe.d option applied, marker kept" \
  eq "$(S n1 'sysctl -n vm.swappiness vm.max_map_count; cat /sys/module/nvidia/parameters/NVreg_EnableStreamMemOPs /var/lib/plumb/marker.json' | xargs)" \
  "60 262144 1 {commit:abc}"
check "fabric manager 535 against driver 550 fails to start, like the real one" \
  eq "$(S n1 'systemctl is-active nvidia-fabricmanager; systemctl start nvidia-fabricmanager 2>/dev/null; echo $?' | xargs)" "failed 1"
check "events.log records installs, reboot, pending applied and boot in order" \
  eq "$(grep -oE 'apt-get install nvidia-driver-550|reboot requested|applied pending|boot id' "$TB_RUN/nodes/n1/state/events.log" | tail -4 | xargs)" \
  "apt-get install nvidia-driver-550 reboot requested applied pending boot id"

S n3 'apt-get remove -y nvidia-fabricmanager-535' >/dev/null
check "removing the fabric manager package removes its binary (sh: not found, 127)" \
  eq "$(S n3 'sh -c "nv-fabricmanager --version" 2>&1; echo rc=$?' | xargs)" "sh: 1: nv-fabricmanager: not found rc=127"
S n3 'apt-get install -y nvidia-fabricmanager-550' >/dev/null
check "installing it brings the binary back with the new version" \
  eq "$(S n3 nv-fabricmanager --version)" "Fabric Manager version is : 550.90.07"
S n3 apt-mark hold libnccl2 >/dev/null
check "apt-mark hold: dpkg-query shows hi, apt-get refuses to change it (exit 100)" \
  eq "$(S n3 'dpkg-query -W -f="\${db:Status-Abbrev}" libnccl2; apt-get install -y libnccl2=2.21.5-1+cuda12.4 >/dev/null 2>&1; echo $?')" "hi 100"
check "... unless --allow-change-held-packages" \
  eq "$(S n3 'apt-get install -y --allow-change-held-packages libnccl2=2.21.5-1+cuda12.4 >/dev/null; dpkg-query -W -f="\${Version}" libnccl2')" "2.21.5-1+cuda12.4"
"$TB" state n3 'apt_fail=^nvidia-driver'
S n3 apt-get install -y nvidia-driver-550 >/dev/null 2>&1
rc=$?
check "apt_fail: exit 100, the package left unpacked but not configured (iU)" \
  eq "$rc/$(S n3 'dpkg-query -W -f="\${db:Status-Abbrev}" nvidia-driver-550')" "100/iU "
check "... and apt refuses to run until dpkg --configure -a (exit 100, dpkg was interrupted)" \
  eq "$(S n3 'apt-get install -y libnccl-dev 2>&1 >/dev/null; echo rc=$?')" \
  "$(printf '%s\nrc=100' "E: dpkg was interrupted, you must manually run 'dpkg --configure -a' to correct the problem. ")"
check "dpkg --audit lists it (exit 1)" eq "$(S n3 'dpkg --audit | grep -c nvidia-driver-550; echo rc=${PIPESTATUS[0]}' | xargs)" "1 rc=1"
"$TB" state n3 -apt_fail
S n3 'dpkg --configure -a' >/dev/null
check "dpkg --configure -a finishes it (ii) and --audit is clean" \
  eq "$(S n3 'dpkg-query -W -f="\${db:Status-Abbrev}" nvidia-driver-550; dpkg --audit; echo rc=$?' | xargs)" "ii rc=0"
"$TB" state n3 'apt_hold=^libnccl-dev$'
S n3 apt-get install -y libnccl-dev >/dev/null 2>&1 &
# wait until it holds the lock (its package is unpacked, then it is held there until the key
# goes), however loaded the machine: a state, not a window
for _ in $(seq 300); do
  [[ $(S n3 'dpkg-query -W -f="\${db:Status-Abbrev}" libnccl-dev 2>/dev/null') == "iU " ]] && break
  sleep 0.2
done
check "apt_hold: a concurrent apt-get fails on the dpkg lock (exit 100)" \
  eq "$(S n3 'apt-get install -y datacenter-gpu-manager 2>/tmp/err >/dev/null; echo rc=$?; head -1 /tmp/err')" \
  "$(printf 'rc=100\nE: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process %s (apt-get)' "$(cat "$TB_RUN/nodes/n3/state/dpkg.lock.pid")")"
"$TB" state n3 -apt_hold
wait
"$TB" state n3 -apt_fail

"$TB" ctl partition n2
check "partition: connects time out" \
  bash -c "'$TB' exec ssh -F '$TB_SSH_CONFIG' -o ConnectTimeout=1 n2 true 2>&1 | grep -q 'timed out'"
"$TB" ctl heal n2
check "heal: reachable again" eq "$(S n2 hostname)" n2

# --- BMC-like power control -------------------------------------------------------------
"$TB" ctl poweroff n3
sleep 0.5
check "tb ctl poweroff: status off, power Off, connection refused" \
  eq "$("$TB" ctl status n3)/$("$TB" ctl power n3)/$("$TB" exec ssh -F "$TB_SSH_CONFIG" -o ConnectTimeout=2 n3 true 2>&1 | grep -o 'Connection refused')" "off/Off/Connection refused"
"$TB" ctl poweron n3
check "tb ctl poweron: back up" "$TB" ctl wait-up n3
"$TB" ctl poweroff n3; "$TB" ctl poweron n3
"$TB" ctl reboot n3 & "$TB" ctl poweroff n3; wait
"$TB" ctl poweron n3
"$TB" ctl wait-up n3 >/dev/null
check "a storm of BMC actions leaves one n3: up, one unshare, one sshd listening" \
  eq "$("$TB" ctl status n3)/$(pgrep -fc "unshare .*init.sh $TB_RUN/nodes/n3\$")/$(X ss -Hltn src 127.10.0.4:22 | wc -l)" "up/1/1"
# The last request wins, also one sent while the node still goes down from a poweroff (held
# there by ctl/hold-down until the request is in): a poweron, or a reboot, boots it again.
held() { for _ in $(seq 600); do [[ -e $TB_RUN/nodes/n3/ctl/held ]] && return 0; sleep 0.1; done; return 1; }
for then in poweron reboot; do
  touch "$TB_RUN/nodes/n3/ctl/hold-down"
  "$TB" ctl poweroff n3
  held || echo "n3's supervisor never reached the hold"
  "$TB" ctl "$then" n3
  rm -f "$TB_RUN/nodes/n3/ctl/hold-down"
  check "tb ctl $then while a poweroff's node goes down: n3 boots again" "$TB" ctl wait-up n3
done
"$TB" state n2 reboot_hang=1 down_mode=drop
S n2 reboot
sleep $((TB_DOWNTIME + 1))
check "reboot_hang=1: the node does not come back (status hung)" eq "$("$TB" ctl status n2)" hung
check "down_mode=drop: the down node times out instead of refusing" \
  bash -c "'$TB' exec ssh -F '$TB_SSH_CONFIG' -o ConnectTimeout=1 n2 true 2>&1 | grep -q 'timed out'"
"$TB" state n2 -reboot_hang -down_mode pkg_format=rpm os_id=rhel os_version_id=9.4 os_codename=Plow
"$TB" ctl reboot n2
check "tb ctl reboot power-cycles a hung node back up" "$TB" ctl wait-up n2
check "pkg_format=rpm + os_id=rhel: rpm and dnf, no dpkg-query, RHEL os-release" \
  eq "$(S n2 'for t in dpkg-query apt-get rpm dnf; do command -v $t || echo no-$t; done; . /etc/os-release; echo "$ID $VERSION_ID $PLATFORM_ID"' | xargs)" \
  "no-dpkg-query no-apt-get /usr/bin/rpm /usr/bin/dnf rhel 9.4 platform:el9"
check "rpm -qa --qf (EPOCH split out) and dnf list installed see the package list" \
  eq "$(S n2 "rpm -qa --qf '%{NAME}\t%{EPOCH}\t%{VERSION}-%{RELEASE}\t%{ARCH}\n' | grep -E '^(datacenter-gpu-manager|libnccl2)'; dnf list installed libnccl2 | tail -1 | awk '{print \$2}'")" \
  "$(printf 'datacenter-gpu-manager\t1\t3.3.5-1\tx86_64\nlibnccl2\t(none)\t2.19.3-1+cuda12.2\tx86_64\n2.19.3-1+cuda12.2')"
S n2 'dnf install -y kernel-5.14.0-427.13.1.el9_4' >/dev/null
check "rpm node: dnf install kernel-K makes it the next boot's kernel (grubby agrees)" \
  eq "$(S n2 grubby --default-kernel)/$(st n2 kernel pending.conf)" "/boot/vmlinuz-5.14.0-427.13.1.el9_4.x86_64/5.14.0-427.13.1.el9_4.x86_64"
S n2 'dnf install -y --allowerasing nvidia-driver-550-550.90.07' >/dev/null
check "dnf install name-version: installed, driver pending" \
  eq "$(S n2 "rpm -q --qf '%{VERSION}' nvidia-driver-550")/$(st n2 driver pending.conf)" "550.90.07/550.90.07"

b0=$(S n4 cat /proc/sys/kernel/random/boot_id)
"$TB" ctl reboot n4 & "$TB" ctl reboot n4; wait
"$TB" ctl wait-up n4 >/dev/null
check "two concurrent tb ctl reboot: one power cycle, node back with a new boot_id" \
  eq "$(grep -c 'power cycle (BMC)' "$TB_RUN/nodes/n4/state/events.log")/$([[ $(S n4 cat /proc/sys/kernel/random/boot_id) != "$b0" ]] && echo new)" "1/new"

# --- Slurm -----------------------------------------------------------------------------
wait_state() { # NODE STATE SECONDS
  local end=$((SECONDS + $3))
  while ((SECONDS < end)); do
    [[ $(X sinfo -h -N -n "$1" -o %T) == "$2" ]] && return 0
    sleep 0.3
  done
  echo "    $1 is $(X sinfo -h -N -n "$1" -o %T), not $2"
  return 1
}
check "the head node runs Slurm's commands over ssh" eq "$(S head sinfo -h -N -o %N | sort -u | xargs)" "n1 n2 n3 n4"
check "all four Slurm nodes idle again after the reboots" bash -c "for n in n1 n2 n3 n4; do s=''; for i in \$(seq 60); do s=\$('$TB' exec sinfo -h -N -n \$n -o %T); [ \"\$s\" = idle ] && break; sleep 0.5; done; [ \"\$s\" = idle ] || exit 1; done"
"$TB" state n4 check_drained=1
jid=$(X sbatch --parsable -w n4 --chdir="$TB_RUN/jobs" -o /dev/null --wrap 'sleep 4')
for _ in $(seq 50); do [[ $(X squeue -h -j "$jid" -o %T) == RUNNING ]] && break; sleep 0.2; done
S n4 'sysctl -w vm.swappiness=5' >/dev/null
check "check_drained: a change while a job runs logs a VIOLATION" \
  grep -q "VIOLATION sysctl vm.swappiness=5 while jobs running: $jid" "$TB_RUN/nodes/n4/state/events.log"
X scontrol update nodename=n4 state=drain reason=selftest
check "drain with a running job: draining" eq "$(X sinfo -h -N -n n4 -o %T)" draining
check "... drained when the job ends" wait_state n4 drained 30
S n4 'sysctl -w vm.swappiness=6' >/dev/null
check "no VIOLATION for a change on the drained node" eq "$(grep -c VIOLATION "$TB_RUN/nodes/n4/state/events.log")" 1
X scontrol update nodename=n4 state=resume
check "resume: idle" wait_state n4 idle 15

# --- cluster repo ----------------------------------------------------------------------
printf 'kernel: 5.15.0-119-generic\n' >"$TB_RUN/jobs/base.yaml"
"$TB" cluster-repo "$TB_RUN/jobs/repo" --stack "$TB_RUN/jobs/base.yaml" >/dev/null
check "tb cluster-repo: a git repo whose gpu group uses the stack" \
  eq "$(git -C "$TB_RUN/jobs/repo" ls-files | xargs)/$(grep -c 'gpu: { stack: base }' "$TB_RUN/jobs/repo/inventory.yaml")" "inventory.yaml stacks/base.yaml/1"

# --- teardown --------------------------------------------------------------------------
pids=()
for p in /proc/[0-9]*; do
  [[ $(readlink "$p/ns/net" 2>/dev/null) == "net:[$ns_inode]" ]] && pids+=("${p#/proc/}")
done
t1=$SECONDS
"$TB" down
trap - EXIT
left=()
for p in "${pids[@]}"; do
  s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
  s=${s##*) }
  [[ ${s:0:1} == Z ]] || left+=("$p")
done
check "tb down: none of the ${#pids[@]} testbed processes is left, netns and run dir gone" \
  eq "${left[*]:-}/$(ip netns list | grep -cw "$TB_NETNS")/$([[ -e $TB_RUN ]] && echo run-dir-left)" "/0/"
echo "tb down took $((SECONDS - t1)) s; whole test $((SECONDS - t0)) s"
echo "$pass passed, $fail failed"
((fail == 0))
