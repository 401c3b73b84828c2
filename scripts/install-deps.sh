#!/usr/bin/env bash
# Installs what plumb needs to build, test and run its testbed, from Debian's packages.
# Idempotent and fast when everything is present: it asks dpkg first and calls apt-get
# only for what is missing. Run as root (CI and the testbed run as root).
set -euo pipefail

# Build: compiler, CMake and the libraries named in the README (libmicrohttpd: the metrics
# endpoint of `plumb watch --listen`); dpkg-dev and file for `make package` (CPack runs
# dpkg-shlibdeps for the Depends line and file to find the binaries); clang (with its sanitizer
# runtimes) for the ASan+UBSan build of `make check-asan`, which it compiles in half GCC's time.
build_pkgs=(g++ cmake make ninja-build pkg-config git ccache
  libssh-dev libcurl4-openssl-dev libssl-dev libgit2-dev libyaml-cpp-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev libsqlite3-dev libpq-dev doctest-dev libmimalloc-dev
  libmicrohttpd-dev dpkg-dev file clang)
# Testbed: real sshd + Slurm nodes, the Redfish emulator and its third-party client; gnupg for
# the signed-commit tests; man-db for the package test (man -l on the installed pages); zsh and
# fish to run their completion scripts (e2e.completion_man); postgresql-15 for the shared-store
# tests (each starts its own server with initdb in a temporary directory); chromium to render
# the drift HTML page (e2e.drift_html_chromium: tests install nothing themselves).
testbed_pkgs=(openssh-server openssh-client slurmctld slurmd slurm-client munge
  nftables iproute2 procps python3 redfishtool util-linux openssl curl
  xmlstarlet jq libxml2-utils gnupg man-db zsh fish postgresql-15 chromium)
# kubectl for the Kubernetes drainer and its API emulator (tests/testbed/kube): Debian's
# kubernetes-client (1.20), only when no kubectl is on PATH (a cloud SDK's kubectl conflicts
# with the package).
command -v kubectl >/dev/null || testbed_pkgs+=(kubernetes-client)

want=("${build_pkgs[@]}")
[[ "${PLUMB_DEPS:-all}" == build ]] || want+=("${testbed_pkgs[@]}")

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#want[@]} packages present"
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "hint: run as root, or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
