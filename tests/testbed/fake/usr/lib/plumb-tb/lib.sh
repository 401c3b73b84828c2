# shellcheck shell=bash
# Helpers shared by the fake node tools. Sourced, never run.
#
# Inside a node the node's directory is bind-mounted at /var/lib/tbnode and
# this file is /usr/lib/plumb-tb/lib.sh (the fakes are the lower layer of the
# node's /usr overlay). Outside a node, set TBNODE to a node directory to run
# a fake directly against its state.
#
# Reads use bash builtins only (no fork, no exec): a gather over 256 nodes runs
# these scripts thousands of times on a 2-core machine.

TBNODE=${TBNODE:-/var/lib/tbnode}
ST=$TBNODE/state
# Inside a node (not when a test runs a fake against a scratch state): only
# then may the fakes write the node's /usr like a package would.
in_node() { [[ $TBNODE == /var/lib/tbnode ]]; }

# Tools that come with a package exist only while it is installed, so a
# missing one fails the way the calling shell reports it ("sh: 1: ofed_info:
# not found"). Their scripts live in /usr/lib/plumb-tb/tools; /usr/bin holds a
# link (from the fakes' layer) or, when removed, a whiteout in the node's layer.
# The package tools of a node follow pkg_format (deb: dpkg-query, dpkg,
# apt-get, apt-cache, apt-mark; rpm: rpm, dnf), so `command -v dpkg-query`
# tells the package manager as on a real node.
tool_show() { in_node && ln -sfn "../lib/plumb-tb/tools/$1" "/usr/bin/$1"; }
tool_hide() { # TOOL...
  local t paths=()
  in_node || return 0
  for t in "$@"; do paths+=("/usr/bin/$t"); done
  rm -f "${paths[@]}"
}
declare -A _ST=()
_st_loaded=

# st_load: read current.conf's KEY=VALUE lines into _ST.
st_load() {
  local k v
  _ST=()
  if [[ -r $ST/current.conf ]]; then
    while IFS='=' read -r k v; do
      [[ -n $k && $k != \#* ]] && _ST[$k]=$v
    done <"$ST/current.conf"
  fi
  _st_loaded=1
}

# st_get KEY [FILE]: the value of KEY (empty when unset; the last line wins).
# current.conf is read once per process, another FILE on each call.
st_get() {
  local k v val=""
  if [[ -n ${2:-} ]]; then
    if [[ -r $2 ]]; then
      while IFS='=' read -r k v; do [[ $k == "$1" ]] && val=$v; done <"$2"
    fi
    printf '%s\n' "$val"
    return 0
  fi
  [[ -n $_st_loaded ]] || st_load
  printf '%s\n' "${_ST[$1]:-}"
}

# st_set FILE KEY VALUE: replace KEY's line atomically, under the state lock.
st_set() {
  local f=$1 k=$2 v=$3
  (
    flock 8
    { [[ -r $f ]] && grep -v "^$k=" "$f"; printf '%s=%s\n' "$k" "$v"; } >"$f.tmp.$$"
    mv "$f.tmp.$$" "$f"
  ) 8>"$ST/.state.lock"
  _st_loaded=
}
# st_del FILE KEY
st_del() {
  local f=$1 k=$2
  [[ -r $f ]] || return 0
  (
    flock 8
    { grep -v "^$k=" "$f" || true; } >"$f.tmp.$$"
    mv "$f.tmp.$$" "$f"
  ) 8>"$ST/.state.lock"
  _st_loaded=
}

# ev MESSAGE: append a timestamped line to the node's events.log.
ev() { printf '%s %s\n' "${EPOCHREALTIME:0:14}" "$*" >>"$ST/events.log"; }

# hash32 STRING: a stable 32-bit number (FNV-1a), for per-node serials and GUIDs.
hash32() {
  local s=$1 h=2166136261 i c
  for ((i = 0; i < ${#s}; i++)); do
    printf -v c '%d' "'${s:i:1}"
    h=$((((h ^ c) * 16777619) & 0xffffffff))
  done
  echo "$h"
}

# --- the GPUs' identities -----------------------------------------------------
# One source for what nvidia-smi, dcgmi, all_reduce_perf and the kernel log
# say about GPU i: the PCI bus ids of an HGX H100 baseboard, a UUID and a
# serial number derived from the node's hostname.
GPU_BUSES=(18 2A 3A 5D 9A AB BA DB 1B 2C 3C 5F 9C AD BC DD)
_gpu_h=
gpu_h() { [[ -n $_gpu_h ]] || _gpu_h=$(hash32 "$(st_get hostname)"); }
gpu_bus() { # I -> "18" (upper-case hex)
  printf '%s' "${GPU_BUSES[$1]:-$(printf '%02X' $((0x40 + $1)))}"
}
gpu_busid() { printf '00000000:%s:00.0' "$(gpu_bus "$1")"; }
gpu_uuid() {
  gpu_h
  local h=$_gpu_h
  printf 'GPU-%08x-%04x-%04x-%04x-%012x' "$h" $(((h >> 16) ^ $1)) $((0x4000 + $1)) $((0x8000 + (h & 0xfff))) $(((h * 2654435761 + $1) & 0xffffffffffff))
}
gpu_serial() { gpu_h; printf '%d' $((1652322000000 + (_gpu_h % 100000) * 10 + $1)); }

# --- packages (state/packages: "name version" lines, sorted) -----------------
pkg_ver() { # NAME -> installed version, or nothing
  local p v
  while read -r p v; do [[ $p == "$1" ]] && { echo "$v"; return 0; }; done <"$ST/packages"
  return 1
}
pkg_set() { # NAME VERSION
  (
    flock 8
    { awk -v p="$1" '$1 != p' "$ST/packages"; echo "$1 $2"; } | LC_ALL=C sort >"$ST/packages.tmp.$$"
    mv "$ST/packages.tmp.$$" "$ST/packages"
  ) 8>"$ST/.state.lock"
}
pkg_del() { # NAME
  (
    flock 8
    awk -v p="$1" '$1 != p' "$ST/packages" >"$ST/packages.tmp.$$"
    mv "$ST/packages.tmp.$$" "$ST/packages"
  ) 8>"$ST/.state.lock"
}
# repo_ver NAME [VERSION]: with VERSION, prints it if the fake repository has
# it; without, prints the candidate (the last line for NAME). Fails if none.
repo_ver() {
  local p v found=
  while read -r p v; do
    [[ $p == "$1" ]] || continue
    if [[ -n ${2:-} ]]; then [[ $v == "$2" ]] && found=$v; else found=$v; fi
  done <"$ST/repo"
  [[ -n $found ]] && echo "$found"
}
# upstream VERSION: drop the epoch and the distribution revision
# ("1:3.3.7" -> 3.3.7, "550.90.07-0ubuntu1" -> 550.90.07). OFED versions keep
# their dash ("24.07-0.6.1.0"), so callers that want them use the raw value.
upstream() { local v=${1#*:}; echo "${v%%-*}"; }

# The CUDA version nvidia-smi shows is the newest the driver supports.
cuda_for_driver() {
  case ${1%%.*} in
    525) echo 12.0 ;; 530) echo 12.1 ;; 535) echo 12.2 ;; 545) echo 12.3 ;;
    550) echo 12.4 ;; 555) echo 12.5 ;; 560) echo 12.6 ;; 565) echo 12.7 ;;
    570) echo 12.8 ;; 575) echo 12.9 ;; 580) echo 13.0 ;; 610) echo 13.3 ;; *) echo 12.0 ;;
  esac
}
# nvcc's own version in a toolkit release (from NVIDIA's version.json files).
nvcc_for_cuda() {
  case $1 in
    12.2.2) echo 12.2.140 ;; 12.3.2) echo 12.3.107 ;; 12.4.0) echo 12.4.99 ;;
    12.4.1) echo 12.4.131 ;; 12.5.1) echo 12.5.82 ;; 12.6.2) echo 12.6.77 ;;
    12.6.3) echo 12.6.85 ;; 12.8.1) echo 12.8.93 ;; *) echo "${1%.*}.$((100 + ${1##*.}))" ;;
  esac
}

# pkg_installed_effects NAME VERSION: what installing a package changes besides
# the package list. Kernel, driver and OFED take effect at the next boot
# (pending.conf); the CUDA toolkit and the fabric manager binary at once.
pkg_installed_effects() {
  local p=$1 v=$2 d
  case $p in
    linux-image-[0-9]*)
      st_set "$ST/pending.conf" kernel "${p#linux-image-}"
      st_set "$ST/pending.conf" kernel_build "#${v##*.}-Ubuntu SMP Fri Aug  2 19:25:20 UTC 2024" ;;
    nvidia-driver | nvidia-driver-[0-9]* | cuda-drivers | cuda-drivers-[0-9]*)
      d=$(upstream "$v")
      st_set "$ST/pending.conf" driver "$d" ;;
    kernel | kernel-core)
      # dnf makes the newest kernel the default (grubby --set-default changes it)
      st_set "$ST/pending.conf" kernel "${v#*:}.x86_64" ;;
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
pkg_removed_effects() { # NAME
  case $1 in
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
# pkg_remove NAME TOOL VERB
pkg_remove() {
  check_drained "$2 $3 $1"
  pkg_del "$1"
  pkg_removed_effects "$1"
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
