# shellcheck shell=bash
# The fakes' helpers that change a node or render its files: package effects, the boot
# loader. lib.sh loads this file the first time one of them is called (see the end of
# lib.sh), so a fake that only reads (the probe runs ~20 of them per node read) does not
# parse it. Sourced, never run.
# pkg_installed_effects NAME VERSION: what installing a package changes besides
# the package list. Kernel, driver and OFED take effect at the next boot
# (pending.conf); the CUDA toolkit and the fabric manager binary at once.
pkg_installed_effects() {
  local p=$1 v=$2 d
  case $p in
    linux-image-[0-9]*)
      # /etc/kernel/postinst.d/zz-update-grub: GRUB's menu gains the kernel
      grub_mkconfig >/dev/null 2>&1
      boot_refresh ;;
    nvidia-driver | nvidia-driver-[0-9]* | cuda-drivers | cuda-drivers-[0-9]*)
      d=$(upstream "$v")
      st_set "$ST/pending.conf" driver "$d" ;;
    kernel | kernel-core)
      # kernel-install: a BLS entry, and with UPDATEDEFAULT=yes
      # (/etc/sysconfig/kernel) the new kernel becomes the default
      bls_add "${v#*:}.x86_64"
      boot_refresh ;;
    mlnx-ofed-all | mlnx-ofed-basic)
      st_set "$ST/pending.conf" ofed "${v#*:}"
      st_set "$ST/pending.conf" ofed_flavor mlnx ;;
    doca-ofed)
      st_set "$ST/pending.conf" ofed "${v#*:}"
      st_set "$ST/pending.conf" ofed_flavor doca ;;
    cuda-toolkit-[0-9]* | cuda-[0-9]*-[0-9]*)
      d=$(upstream "$v")
      st_set "$ST/current.conf" cuda "$d"
      st_set "$ST/current.conf" nvcc "$(nvcc_for_cuda "$d")"
      render_cuda ;;
    nvidia-fabricmanager-[0-9]* | nvidia-fabric-manager)
      st_set "$ST/current.conf" fabricmanager "$(upstream "$v")"
      tool_show nv-fabricmanager ;;
    datacenter-gpu-manager | datacenter-gpu-manager-4-core) tool_show dcgmi ;;
  esac
  if [[ -s $ST/pending.conf ]]; then
    : >"$ST/reboot-required"
    : >/run/reboot-required 2>/dev/null || true
  fi
}
pkg_removed_effects() { # NAME [VERSION]
  case $1 in
    linux-image-[0-9]*) grub_mkconfig >/dev/null 2>&1; boot_refresh ;;
    kernel | kernel-core) rm -f "$(tb_root)/boot/loader/entries/$(machine_id)-${2#*:}.x86_64.conf"; boot_refresh ;;
    nvidia-driver-[0-9]* | cuda-drivers | cuda-drivers-[0-9]*) st_set "$ST/pending.conf" driver "" ;;
    cuda-toolkit-[0-9]* | cuda-[0-9]*-[0-9]*)
      st_del "$ST/current.conf" cuda
      st_del "$ST/current.conf" nvcc
      render_cuda ;;
    nvidia-fabricmanager-[0-9]* | nvidia-fabric-manager)
      st_del "$ST/current.conf" fabricmanager
      tool_hide nv-fabricmanager ;;
    mlnx-ofed-all | mlnx-ofed-basic | doca-ofed) st_set "$ST/pending.conf" ofed "" ;;
    datacenter-gpu-manager | datacenter-gpu-manager-4-core) tool_hide dcgmi ;;
  esac
}

# check_drained ACTION: with check_drained=1 in current.conf, changing the node
# while Slurm still runs jobs on it is logged as "VIOLATION ..." in events.log.
# This checks plumb's core invariant ("never touch a node that is not
# drained") from the node's side.
check_drained() {
  [[ $(st_get check_drained) == 1 ]] || return 0
  local jobs
  jobs=$(squeue -h -w "$(st_get hostname)" -t R,CG -o %i 2>/dev/null | tr '\n' ' ')
  [[ -z $jobs ]] || ev "VIOLATION $* while jobs running: $jobs"
}

# --- files rendered from the state -------------------------------------------
# render_cuda: /usr/local/cuda-X.Y/{version.json,bin/nvcc} and the
# /usr/local/cuda link, as the toolkit package installs them. Cheap when
# nothing changed (every boot calls it).
render_cuda() {
  local c n dir json old=""
  in_node || return 0
  st_load
  c=${_ST[cuda]:-} n=${_ST[nvcc]:-}
  if [[ -z $c ]]; then
    rm -f /usr/local/cuda
    return 0
  fi
  dir=/usr/local/cuda-${c%.*}
  printf -v json '{\n   "cuda" : {\n      "name" : "CUDA SDK",\n      "version" : "%s"\n   },\n   "cuda_cccl" : {\n      "name" : "CUDA C++ Core Compute Libraries",\n      "version" : "%s"\n   },\n   "cuda_cudart" : {\n      "name" : "CUDA Runtime (cudart)",\n      "version" : "%s"\n   },\n   "cuda_nvcc" : {\n      "name" : "CUDA NVCC",\n      "version" : "%s"\n   },\n   "cuda_nvrtc" : {\n      "name" : "CUDA NVRTC",\n      "version" : "%s"\n   },\n   "nvidia_driver" : {\n      "name" : "NVIDIA Linux Driver",\n      "version" : "%s"\n   }\n}' \
    "$c" "$(cudart_for_cuda "$c" "$n")" "$(cudart_for_cuda "$c" "$n")" "$n" "$n" "$(cuda_driver_min "${c%.*}")"
  [[ -r $dir/version.json ]] && old=$(<"$dir/version.json")
  if [[ $old != "$json" || ! -x $dir/bin/nvcc ]]; then
    mkdir -p "$dir/bin"
    printf '%s\n' "$json" >"$dir/version.json"
    cp /usr/lib/plumb-tb/nvcc "$dir/bin/nvcc"
  fi
  [[ -L /usr/local/cuda && /usr/local/cuda -ef $dir ]] || ln -sfn "$dir" /usr/local/cuda
}
cudart_for_cuda() { # TOOLKIT NVCC -> the runtime's version in that release
  case $1 in
    12.4.1) echo 12.4.127 ;; 12.6.2) echo 12.6.77 ;; *) echo "$2" ;;
  esac
}
cuda_driver_min() { # the driver a toolkit release bundles
  case $1 in
    12.2) echo 535.104.05 ;; 12.3) echo 545.23.08 ;; 12.4) echo 550.54.15 ;;
    12.5) echo 555.42.06 ;; 12.6) echo 560.35.03 ;; 12.8) echo 570.124.06 ;; *) echo 535.54.03 ;;
  esac
}

# render_os_release: /usr/lib/os-release (/etc/os-release links to it), in
# Ubuntu's format.
render_os_release() {
  local os old=""
  in_node || return 0
  st_load
  local id=${_ST[os_id]:-ubuntu} vid=${_ST[os_version_id]:-22.04} cn=${_ST[os_codename]:-jammy}
  if [[ $id == rhel ]]; then
    # RHEL's format (redhat-release 9.x); os_version_id like 9.4, os_codename Plow
    printf -v os '%s\n' \
      'NAME="Red Hat Enterprise Linux"' \
      "VERSION=\"$vid ($cn)\"" \
      'ID="rhel"' \
      'ID_LIKE="fedora"' \
      "VERSION_ID=\"$vid\"" \
      "PLATFORM_ID=\"platform:el${vid%%.*}\"" \
      "PRETTY_NAME=\"Red Hat Enterprise Linux $vid ($cn)\"" \
      'ANSI_COLOR="0;31"' \
      'LOGO="fedora-logo-icon"' \
      "CPE_NAME=\"cpe:/o:redhat:enterprise_linux:${vid%%.*}::baseos\"" \
      'HOME_URL="https://www.redhat.com/"' \
      "DOCUMENTATION_URL=\"https://access.redhat.com/documentation/en-us/red_hat_enterprise_linux/${vid%%.*}\"" \
      'BUG_REPORT_URL="https://bugzilla.redhat.com/"' \
      '' \
      "REDHAT_BUGZILLA_PRODUCT=\"Red Hat Enterprise Linux ${vid%%.*}\"" \
      "REDHAT_BUGZILLA_PRODUCT_VERSION=$vid" \
      'REDHAT_SUPPORT_PRODUCT="Red Hat Enterprise Linux"' \
      "REDHAT_SUPPORT_PRODUCT_VERSION=\"$vid\""
  else
    printf -v os '%s\n' \
      "PRETTY_NAME=\"${_ST[os_pretty_name]:-Ubuntu 22.04.4 LTS}\"" \
      "NAME=\"${_ST[os_name]:-Ubuntu}\"" \
      "VERSION_ID=\"$vid\"" \
      "VERSION=\"${_ST[os_version]:-22.04.4 LTS (Jammy Jellyfish)}\"" \
      "VERSION_CODENAME=$cn" \
      "ID=$id" \
      "ID_LIKE=debian" \
      'HOME_URL="https://www.ubuntu.com/"' \
      'SUPPORT_URL="https://help.ubuntu.com/"' \
      'BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"' \
      'PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"' \
      "UBUNTU_CODENAME=$cn"
  fi
  [[ -r /usr/lib/os-release ]] && old=$(</usr/lib/os-release)
  [[ $old == "${os%$'\n'}" ]] || printf '%s' "$os" >/usr/lib/os-release
  [[ -L /etc/os-release && /etc/os-release -ef /usr/lib/os-release ]] || ln -sfn ../usr/lib/os-release /etc/os-release
}

# ver_lt A B: A sorts before B (GNU sort -V, close to dpkg's ordering for
# the versions the testbed uses).
ver_lt() {
  [[ $1 != "$2" ]] && [[ $(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1) == "$1" ]]
}

# pkg_install NAME VERSION TOOL: record an installation made by TOOL
# (apt-get, dnf, dpkg --configure) with all its effects.
pkg_install() {
  check_drained "$3 install $1=$2"
  pkg_set "$1" "$2"
  pkg_installed_effects "$1" "$2"
  pkg_state_clear "$1"
  ev "$3 install $1=$2"
}
# Half-installed packages (state/pkg-status: "name abbrev", e.g. "nvidia-driver-550 iU"): a
# package unpacked but never configured, as an install killed midway leaves it. Every other
# package is "ii". dpkg-query shows the state, dpkg --audit lists it, dpkg --configure -a
# finishes it (and only then do its effects happen).
pkg_state() { # NAME -> abbrev (ii when not recorded)
  local p s
  if [[ -r $ST/pkg-status ]]; then
    while read -r p s; do [[ $p == "$1" ]] && { echo "$s"; return 0; }; done <"$ST/pkg-status"
  fi
  echo ii
}
pkg_state_set() { # NAME ABBREV
  (
    flock 8
    { awk -v p="$1" '$1 != p' "$ST/pkg-status" 2>/dev/null; echo "$1 $2"; } >"$ST/pkg-status.tmp.$$"
    mv "$ST/pkg-status.tmp.$$" "$ST/pkg-status"
  ) 8>"$ST/.state.lock"
}
pkg_state_clear() { # NAME
  [[ -r $ST/pkg-status ]] || return 0
  (
    flock 8
    awk -v p="$1" '$1 != p' "$ST/pkg-status" >"$ST/pkg-status.tmp.$$"
    mv "$ST/pkg-status.tmp.$$" "$ST/pkg-status"
  ) 8>"$ST/.state.lock"
}
# pkg_unpack NAME VERSION TOOL: the first half of an install (files in place, not configured).
pkg_unpack() {
  check_drained "$3 unpack $1=$2"
  pkg_set "$1" "$2"
  pkg_state_set "$1" iU
  ev "$3 unpack $1=$2"
}
# pkg_remove NAME TOOL VERB [VERSION]
pkg_remove() {
  check_drained "$2 $3 $1"
  pkg_del "$1" "${4:-}"
  pkg_removed_effects "$1" "${4:-}"
  ev "$2 $3 $1"
}

# The dpkg lock, as apt-get and dnf take it. dpkg_locked=1 in current.conf
# simulates another process (say unattended-upgrades) holding it.
# lock_dpkg TIMEOUT: 0 = fail at once.
lock_dpkg() {
  exec 9>"$ST/dpkg.lock"
  if [[ $(st_get dpkg_locked) == 1 ]] || ! flock -w "${1:-0}" 9; then
    [[ $(st_get dpkg_locked) == 1 ]] && sleep "${1:-0}"
    local holder
    holder=$(cat "$ST/dpkg.lock.pid" 2>/dev/null)
    echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process ${holder:-1234} (apt-get)" >&2
    echo "N: Be aware that removing the lock file is not a solution and may break your system." >&2
    echo "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?" >&2
    return 1
  fi
  echo $$ >"$ST/dpkg.lock.pid"
}

# --- the boot loader: which kernel the next boot runs --------------------------
# The next boot's kernel is pending.conf's "kernel" (current.conf's when unset);
# boot_refresh recomputes it from the boot loader's files whenever a fake
# changes them, the way the firmware would read them at the next boot.
#   deb (Ubuntu): /etc/default/grub (GRUB_DEFAULT=0 out of the box),
#     /boot/grub/grub.cfg as update-grub writes it (entry 0 "Ubuntu" boots the
#     newest installed linux-image, the "Advanced options for Ubuntu" submenu
#     has each kernel and its recovery entry, newest first), /boot/grub/grubenv
#     (saved_entry / next_entry, used when grub.cfg says "${saved_entry}").
#   rpm (RHEL 9): BLS entries /boot/loader/entries/<machine-id>-<release>.conf,
#     /boot/grub2/grubenv saved_entry=<machine-id>-<release>, GRUB_DEFAULT=saved;
#     /etc/sysconfig/kernel UPDATEDEFAULT=yes makes a newly installed kernel
#     the default (an older one too); a saved entry that is gone falls back to
#     the newest entry.
# Files live in the node's own /etc and /boot (TBNODE/fs/... outside a node).
tb_root() { in_node || echo "$TBNODE/fs"; }
machine_id() { # 32 hex digits from the hostname, stable per node
  local h
  h=$(hash32 "$(st_get hostname)")
  printf '%08x%08x%08x%08x' "$h" $((h ^ 0x5bd1e995)) $(((h * 31) & 0xffffffff)) $((h ^ 0xdeadbeef))
}
root_uuid() { local h; h=$(hash32 "$(st_get hostname)/root"); printf '%08x-%04x-%04x-%04x-%012x' "$h" $((h & 0xffff)) $((0x4000 | (h >> 20 & 0xfff))) $((0x8000 | (h & 0xfff))) $((h * 2654435761 & 0xffffffffffff)); }
boot_family() { [[ $(st_get pkg_format) == rpm ]] && echo rpm || echo deb; }
# deb: the installed kernels, newest first (10_linux sorts with version_sort -r)
deb_kernels() {
  local p v
  while read -r p v; do [[ $p == linux-image-[0-9]* ]] && echo "${p#linux-image-}"; done <"$ST/packages" | sort -rV
}
# rpm: the releases with a BLS entry, newest first (grub2's blscfg order)
bls_kernels() {
  local f r mid
  mid=$(machine_id)
  for f in "$(tb_root)"/boot/loader/entries/"$mid"-*.conf; do
    [[ -e $f ]] || continue
    r=${f##*/"$mid"-}
    echo "${r%.conf}"
  done | sort -rV
}
bls_add() { # RELEASE: kernel-install's entry, and the default if UPDATEDEFAULT=yes
  local R mid
  R=$(tb_root) mid=$(machine_id)
  mkdir -p "$R/boot/loader/entries" "$R/boot/grub2"
  printf 'title Red Hat Enterprise Linux (%s) %s (%s)\nversion %s\nlinux /vmlinuz-%s\ninitrd /initramfs-%s.img $tuned_initrd\noptions root=UUID=%s ro crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M\ngrub_users $grub_users\ngrub_arg --unrestricted\ngrub_class rhel\n' \
    "$1" "$(st_get os_version_id)" "$(st_get os_codename)" "$1" "$1" "$1" "$(root_uuid)" >"$R/boot/loader/entries/$mid-$1.conf"
  if grep -qx 'UPDATEDEFAULT=yes' "$R/etc/sysconfig/kernel" 2>/dev/null; then grubenv_set "$R/boot/grub2/grubenv" saved_entry "$mid-$1"; fi
}
# grubenv: GRUB's 1024-byte environment block
grubenv_list() { # FILE
  local l
  [[ -r $1 ]] || { echo "grub-editenv: error: cannot open \`$1': No such file or directory." >&2; return 1; }
  while IFS= read -r l; do [[ $l == \#* || -z $l ]] || echo "$l"; done <"$1"
}
grubenv_write() { # FILE, the variables on stdin
  local body pad
  body="# GRUB Environment Block"$'\n'"$(cat)"
  body=${body%$'\n'}$'\n'
  [[ $body == *$'\n'$'\n' ]] && body=${body%$'\n'}
  printf -v pad '%*s' $((1024 - ${#body})) ''
  mkdir -p "${1%/*}"
  printf '%s%s' "$body" "${pad// /#}" >"$1"
}
grubenv_set() { # FILE KEY VALUE
  { grubenv_list "$1" 2>/dev/null | grep -v "^$2="; echo "$2=$3"; } | grep -v '^$' | grubenv_write "$1"
}
grubenv_unset() { # FILE KEY
  grubenv_list "$1" 2>/dev/null | grep -v "^$2=" | grubenv_write "$1"
}
grubenv_get() { # FILE KEY
  local l
  while IFS= read -r l; do [[ $l == "$2="* ]] && echo "${l#*=}"; done < <(grubenv_list "$1" 2>/dev/null)
  return 0
}
grub_setting() { # NAME: its value as grub-mkconfig sees it: /etc/default/grub, then
  # /etc/default/grub.d/*.cfg in order (sourced after it: the last one set wins)
  local R f v last=""
  R=$(tb_root)
  for f in "$R/etc/default/grub" "$R"/etc/default/grub.d/*.cfg; do
    [[ -r $f ]] || continue
    v=$(sed -n "s/^$1=//p" "$f" | tail -1 | tr -d '"')
    [[ -n $v ]] && last=$v
  done
  echo "$last"
}
# grub_mkconfig: what update-grub writes to /boot/grub/grub.cfg (the parts of
# it that decide the boot), its messages on stderr as update-grub prints them.
# GRUB_DISTRIBUTOR (a literal; Ubuntu's lsb_release default reads "Ubuntu")
# names the entries ("Ubuntu", else "<it> GNU/Linux" as Debian's 10_linux);
# GRUB_DISABLE_SUBMENU=y puts every kernel's entries at the top. The entries
# are also listed in $ST/grub-entries (title path, id path, index path,
# release; tab-separated) for boot_next.
grub_mkconfig() {
  local R def uuid k first="" ks=() out os cls dist sub idx=0 sidx=0 index="" rargs pt pi at ar ind
  R=$(tb_root)
  def=$(grub_setting GRUB_DEFAULT)
  def=${def:-0}
  [[ $def == saved ]] && def='${saved_entry}'
  dist=$(grub_setting GRUB_DISTRIBUTOR)
  [[ -z $dist || $dist == *'`'* || $dist == *'$('* ]] && dist=Ubuntu
  # Ubuntu's recovery entries boot "recovery nomodeset ...", Debian's "single"
  if [[ $dist == Ubuntu ]]; then os=Ubuntu rargs="recovery nomodeset dis_ucode_ldr"; else os="$dist GNU/Linux" rargs=single; fi
  cls=$(tr 'A-Z' 'a-z' <<<"${dist%% *}")
  sub=$(grub_setting GRUB_DISABLE_SUBMENU)
  [[ $sub == y || $sub == true ]] && sub=y || sub=n
  uuid=$(root_uuid)
  mapfile -t ks < <(deb_kernels)
  echo "Sourcing file \`/etc/default/grub'" >&2
  for k in "$R"/etc/default/grub.d/*.cfg; do [[ -r $k ]] && echo "Sourcing file \`/etc/default/grub.d/${k##*/}'" >&2; done
  echo "Generating grub configuration file ..." >&2
  out="#
# DO NOT EDIT THIS FILE
#
# It is automatically generated by grub-mkconfig using templates
# from /etc/grub.d and settings from /etc/default/grub
#

### BEGIN /etc/grub.d/00_header ###
if [ -s \$prefix/grubenv ]; then
  set have_grubenv=true
  load_env
fi
if [ \"\${next_entry}\" ] ; then
   set default=\"\${next_entry}\"
   set next_entry=
   save_env next_entry
   set boot_once=true
else
   set default=\"$def\"
fi
### END /etc/grub.d/00_header ###

### BEGIN /etc/grub.d/10_linux ###
"
  # entry TITLE ID RELEASE ARGS INDENT
  entry() {
    out+="$5menuentry '$1' --class $cls --class gnu-linux --class gnu --class os \$menuentry_id_option '$2' {
$5	recordfail
$5	linux	/boot/vmlinuz-$3 root=UUID=$uuid ro $4
$5	initrd	/boot/initrd.img-$3
$5}
"
  }
  for k in "${ks[@]}"; do
    echo "Found linux image: /boot/vmlinuz-$k" >&2
    echo "Found initrd image: /boot/initrd.img-$k" >&2
    if [[ -z $first && $sub == n ]]; then
      first=$k
      entry "$os" "gnulinux-simple-$uuid" "$k" "" ""
      index+="$os	gnulinux-simple-$uuid	0	$k"$'\n'
      out+="submenu 'Advanced options for $os' \$menuentry_id_option 'gnulinux-advanced-$uuid' {
"
      idx=1
    fi
    # the kernel's entry and its recovery entry: in the submenu (paths through it) or at the top
    if [[ $sub == n ]]; then
      pt="Advanced options for $os>" pi="gnulinux-advanced-$uuid>" at="1>$sidx" ar="1>$((sidx + 1))" ind="	"
      sidx=$((sidx + 2))
    else
      pt="" pi="" at=$idx ar=$((idx + 1)) ind=""
      idx=$((idx + 2))
    fi
    entry "$os, with Linux $k" "gnulinux-$k-advanced-$uuid" "$k" "" "$ind"
    entry "$os, with Linux $k (recovery mode)" "gnulinux-$k-recovery-$uuid" "$k" "$rargs" "$ind"
    index+="$pt$os, with Linux $k	${pi}gnulinux-$k-advanced-$uuid	$at	$k"$'\n'
    index+="$pt$os, with Linux $k (recovery mode)	${pi}gnulinux-$k-recovery-$uuid	$ar	$k"$'\n'
  done
  [[ -n $first ]] && out+="}
"
  out+="### END /etc/grub.d/10_linux ###"
  mkdir -p "$R/boot/grub"
  printf '%s\n' "$out" >"$R/boot/grub/grub.cfg"
  printf '%s' "$index" >"$ST/grub-entries"
  echo "done" >&2
}
# boot_next: the release the next boot runs, as GRUB would pick it.
boot_next() {
  local R e k ks=() mid saved
  R=$(tb_root)
  if [[ $(boot_family) == rpm ]]; then
    mapfile -t ks < <(bls_kernels)
    mid=$(machine_id)
    saved=$(grubenv_get "$R/boot/grub2/grubenv" saved_entry)
    for k in "${ks[@]}"; do [[ $saved == "$mid-$k" ]] && { echo "$k"; return 0; }; done
    [[ -n ${ks[0]:-} ]] && echo "${ks[0]}" || st_get kernel
    return 0
  fi
  # grub.cfg's default, as update-grub last wrote it
  e=$(sed -n 's/^   set default="\(.*\)"$/\1/p' "$R/boot/grub/grub.cfg" 2>/dev/null | grep -vx '${next_entry}' | tail -1)
  [[ $e == '${saved_entry}' ]] && e=$(grubenv_get "$R/boot/grub/grubenv" saved_entry)
  k=$(grubenv_get "$R/boot/grub/grubenv" next_entry)
  [[ -n $k ]] && e=$k
  [[ -s $ST/grub-entries ]] || { st_get kernel; return 0; }
  # an entry by its title path, its id path or its index path; any other: the first
  local title id index rel first=""
  while IFS=$'\t' read -r title id index rel; do
    [[ -z $first ]] && first=$rel
    if [[ $e == "$title" || $e == "$id" || $e == "$index" ]]; then echo "$rel"; return 0; fi
  done <"$ST/grub-entries"
  echo "$first"
}
# boot_refresh: pending.conf's kernel (and build) from boot_next.
boot_refresh() {
  local k v
  k=$(boot_next)
  if [[ -z $k || $k == "$(st_get kernel)" ]]; then
    st_del "$ST/pending.conf" kernel
    st_del "$ST/pending.conf" kernel_build
    return 0
  fi
  st_set "$ST/pending.conf" kernel "$k"
  if [[ $(boot_family) == rpm ]]; then
    st_set "$ST/pending.conf" kernel_build "#1 SMP PREEMPT_DYNAMIC Wed Apr 10 10:29:16 EDT 2024"
  else
    v=$(pkg_ver "linux-image-$k") || v=$k
    st_set "$ST/pending.conf" kernel_build "#${v##*.}-Ubuntu SMP Fri Aug  2 19:25:20 UTC 2024"
  fi
  if [[ -s $ST/pending.conf ]]; then
    : >"$ST/reboot-required"
    : >/run/reboot-required 2>/dev/null || true
  fi
}
# render_boot: the boot loader's files as the distribution installs them, once
# per node and package format (rendered again when pkg_format changes).
render_boot() {
  local R fam
  R=$(tb_root) fam=$(boot_family)
  # the node's own layer of /etc, never a file the host's /etc shows through
  [[ $(cat "$ST/boot-family" 2>/dev/null) == "$fam" && -e $TBNODE/fs/etc/default/grub ]] && return 0
  mkdir -p "$R/etc/default" "$R/boot"
  rm -rf "$R/boot/grub" "$R/boot/grub2" "$R/boot/loader"
  if [[ $fam == rpm ]]; then
    printf '%s\n' 'GRUB_TIMEOUT=5' 'GRUB_DISTRIBUTOR="$(sed '"'"'s, release .*$,,g'"'"' /etc/system-release)"' \
      'GRUB_DEFAULT=saved' 'GRUB_DISABLE_SUBMENU=true' 'GRUB_TERMINAL_OUTPUT="console"' \
      'GRUB_CMDLINE_LINUX="crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M rhgb quiet"' \
      'GRUB_DISABLE_RECOVERY="true"' 'GRUB_ENABLE_BLSCFG=true' >"$R/etc/default/grub"
    mkdir -p "$R/etc/sysconfig"
    printf '%s\n' '# UPDATEDEFAULT specifies if kernel-install should make' '# new kernels the default' \
      'UPDATEDEFAULT=yes' '' '# DEFAULTKERNEL specifies the default kernel package type' \
      'DEFAULTKERNEL=kernel-core' >"$R/etc/sysconfig/kernel"
    # the installed kernels' entries, the running one the default
    local p v
    while read -r p v; do [[ $p == kernel ]] && bls_add "${v#*:}.x86_64"; done <"$ST/packages"
    grubenv_set "$R/boot/grub2/grubenv" saved_entry "$(machine_id)-$(st_get kernel)"
  else
    printf '%s\n' "# If you change this file, run 'update-grub' afterwards to update" '# /boot/grub/grub.cfg.' \
      '# For full documentation of the options in this file, see:' "#   info -f grub -n 'Simple configuration'" '' \
      'GRUB_DEFAULT=0' 'GRUB_TIMEOUT_STYLE=hidden' 'GRUB_TIMEOUT=0' \
      'GRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`' \
      'GRUB_CMDLINE_LINUX_DEFAULT=""' 'GRUB_CMDLINE_LINUX=""' >"$R/etc/default/grub"
    grubenv_write "$R/boot/grub/grubenv" </dev/null
    grub_mkconfig 2>/dev/null
  fi
  # Nothing pending from it: a node whose state names a kernel no package
  # provides (tb state kernel=...) keeps running it until a fake changes the
  # boot loader.
  echo "$fam" >"$ST/boot-family"
}
