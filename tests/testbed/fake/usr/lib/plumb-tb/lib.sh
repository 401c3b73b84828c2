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
# hash32_v VAR STRING sets VAR instead of printing: the hot fakes (perfquery,
# ibstat, nvidia-smi) call it without a subshell, since a fork costs ~4 ms here.
hash32_v() { # (locals are prefixed: printf -v would set a caller's VAR of the same name here)
  local _hv_s=$2 _hv_h=2166136261 _hv_i _hv_c
  for ((_hv_i = 0; _hv_i < ${#_hv_s}; _hv_i++)); do
    printf -v _hv_c '%d' "'${_hv_s:_hv_i:1}"
    _hv_h=$((((_hv_h ^ _hv_c) * 16777619) & 0xffffffff))
  done
  printf -v "$1" '%s' "$_hv_h"
}
hash32() {
  local v
  hash32_v v "$1"
  echo "$v"
}

# --- the GPUs' identities -----------------------------------------------------
# One source for what nvidia-smi, dcgmi, all_reduce_perf and the kernel log
# say about GPU i: the PCI bus ids of an HGX H100 baseboard, a UUID and a
# serial number derived from the node's hostname.
GPU_BUSES=(18 2A 3A 5D 9A AB BA DB 1B 2C 3C 5F 9C AD BC DD)
_gpu_h=
gpu_h() {
  [[ -n $_gpu_h ]] && return 0
  [[ -n $_st_loaded ]] || st_load
  hash32_v _gpu_h "${_ST[hostname]:-}"
}
# gpu_busid_v VAR I, gpu_uuid_v VAR I, gpu_serial_v VAR I set VAR (no subshell);
# gpu_bus, gpu_busid, gpu_uuid, gpu_serial print the same.
gpu_bus_v() { # VAR I -> "18" (upper-case hex)
  if [[ -n ${GPU_BUSES[$2]:-} ]]; then printf -v "$1" '%s' "${GPU_BUSES[$2]}"; else printf -v "$1" '%02X' $((0x40 + $2)); fi
}
gpu_busid_v() { gpu_bus_v "$1" "$2"; printf -v "$1" '00000000:%s:00.0' "${!1}"; }
gpu_uuid_v() {
  gpu_h
  printf -v "$1" 'GPU-%08x-%04x-%04x-%04x-%012x' "$_gpu_h" $(((_gpu_h >> 16) ^ $2)) $((0x4000 + $2)) $((0x8000 + (_gpu_h & 0xfff))) $(((_gpu_h * 2654435761 + $2) & 0xffffffffffff))
}
gpu_serial_v() { gpu_h; printf -v "$1" '%d' $((1652322000000 + (_gpu_h % 100000) * 10 + $2)); }
gpu_bus() { local v; gpu_bus_v v "$1"; printf '%s' "$v"; }
gpu_busid() { local v; gpu_busid_v v "$1"; printf '%s' "$v"; }
gpu_uuid() { local v; gpu_uuid_v v "$1"; printf '%s' "$v"; }
gpu_serial() { local v; gpu_serial_v v "$1"; printf '%s' "$v"; }

# --- packages (state/packages: "name version" lines, sorted) -----------------
pkg_ver() { # NAME -> installed version, or nothing
  local p v
  while read -r p v; do [[ $p == "$1" ]] && { echo "$v"; return 0; }; done <"$ST/packages"
  return 1
}
# pkg_has NAME VERSION: that version is installed (an install-only package, a
# kernel on rpm, may have several).
pkg_has() {
  local p v
  while read -r p v; do [[ $p == "$1" && $v == "$2" ]] && return 0; done <"$ST/packages"
  return 1
}
# rpm's install-only packages (dnf.conf installonlypkgs): a new version is
# installed beside the others, never over them.
installonly() { [[ $(st_get pkg_format) == rpm && $1 =~ ^kernel(-core|-modules|-devel)?$ ]]; }
pkg_set() { # NAME VERSION
  local keep=0
  installonly "$1" && keep=1
  (
    flock 8
    { awk -v p="$1" -v v="$2" -v k=$keep '$1 != p || (k && $2 != v)' "$ST/packages"; echo "$1 $2"; } | LC_ALL=C sort >"$ST/packages.tmp.$$"
    mv "$ST/packages.tmp.$$" "$ST/packages"
  ) 8>"$ST/.state.lock"
}
pkg_del() { # NAME [VERSION]
  (
    flock 8
    awk -v p="$1" -v v="${2:-}" '$1 != p || (v != "" && $2 != v)' "$ST/packages" >"$ST/packages.tmp.$$"
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
cuda_for_driver_v() { # VAR DRIVER
  local _cd_c
  case ${2%%.*} in
    525) _cd_c=12.0 ;; 530) _cd_c=12.1 ;; 535) _cd_c=12.2 ;; 545) _cd_c=12.3 ;;
    550) _cd_c=12.4 ;; 555) _cd_c=12.5 ;; 560) _cd_c=12.6 ;; 565) _cd_c=12.7 ;;
    570) _cd_c=12.8 ;; 575) _cd_c=12.9 ;; 580) _cd_c=13.0 ;; 610) _cd_c=13.3 ;; *) _cd_c=12.0 ;;
  esac
  printf -v "$1" '%s' "$_cd_c"
}
cuda_for_driver() { local v; cuda_for_driver_v v "$1"; echo "$v"; }
# nvcc's own version in a toolkit release (from NVIDIA's version.json files).
nvcc_for_cuda() {
  case $1 in
    12.2.2) echo 12.2.140 ;; 12.3.2) echo 12.3.107 ;; 12.4.0) echo 12.4.99 ;;
    12.4.1) echo 12.4.131 ;; 12.5.1) echo 12.5.82 ;; 12.6.2) echo 12.6.77 ;;
    12.6.3) echo 12.6.85 ;; 12.8.1) echo 12.8.93 ;; *) echo "${1%.*}.$((100 + ${1##*.}))" ;;
  esac
}

# --- loaded on first use (lib-more.sh) ------------------------------------------
# Parsing the whole library cost each fake ~2 ms of its ~10 ms: the functions below live in
# lib-more.sh, and each name here loads that file (which redefines them all) on its first
# call. testbed_selftest checks that every function of lib-more.sh is listed.
_tb_lib_more=${BASH_SOURCE[0]%/*}/lib-more.sh
[[ $_tb_lib_more == /* ]] || _tb_lib_more=$PWD/$_tb_lib_more
# A stub runs its function only once the file loaded: without the file it fails with a message
# instead of calling itself again.
_tb_autoload() {
  # shellcheck source=lib-more.sh
  . "$_tb_lib_more" || { echo "plumb-tb: cannot load $_tb_lib_more" >&2; return 127; }
}
TB_LIB_MORE_FUNCS=(pkg_installed_effects pkg_removed_effects check_drained render_cuda cudart_for_cuda
  cuda_driver_min render_os_release ver_lt pkg_install pkg_state pkg_state_set pkg_state_clear
  pkg_unpack pkg_remove lock_dpkg tb_root machine_id root_uuid boot_family deb_kernels
  bls_kernels bls_add grubenv_list grubenv_write grubenv_set grubenv_unset grubenv_get
  grub_setting grub_mkconfig boot_next boot_refresh render_boot)
for _tb_f in "${TB_LIB_MORE_FUNCS[@]}"; do
  eval "$_tb_f() { _tb_autoload && $_tb_f \"\$@\"; }"
done
unset _tb_f
