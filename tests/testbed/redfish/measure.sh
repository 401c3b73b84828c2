#!/bin/bash
# measure.sh N [VENDOR] [ROUNDS]: capacity of one emulator process serving N BMCs.
# Starts N BMCs (own loopback address each, in a private netns when root), then one curl
# process walks every BMC's inventory (service root, Systems, the system, FirmwareInventory,
# Bios) ROUNDS times with 64 parallel transfers over HTTPS (verified against the run's CA),
# and prints startup time, requests/s, the emulator's RSS and CPU seconds.
# Not a test (numbers depend on the machine); README.md records what it printed.
set -euo pipefail
n=${1:?usage: measure.sh N [dmtf|ilo|openbmc|mixed] [ROUNDS]}; vendor=${2:-mixed}; rounds=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${RFC_NETNS:-}" ] && [ "$(id -u)" = 0 ] && unshare --net true 2>/dev/null; then
  exec env RFC_NETNS=1 unshare --net bash -c 'ip link set lo up && exec bash "$0" "$@"' "$0" "$@"
fi
run=$(mktemp -d "${TMPDIR:-/tmp}/rfmeasure.XXXXXX")
export BMC_RUN=$run
trap 'bash "$here/bmc" down; rm -rf "$run"' EXIT
if [ -n "${RFC_NETNS:-}" ]; then opts=(--port 8443); else opts=(--ports 30000); fi
t0=$(date +%s.%N)
bash "$here/bmc" up --count "$n" --vendor "$vendor" "${opts[@]}" 2>/dev/null
t1=$(date +%s.%N)
read -r pid _ <"$run/emulator.pid"
IFS=: read -r user password <"$run/credentials"
( umask 077; printf 'user = "%s:%s"\n' "$user" "$password" >"$run/curl.cfg" )
# Every BMC's links, taken from its own mockup (iLO's are lower-case with trailing '/').
: >"$run/urls"
while read -r _ url v _; do
  case $v in
    dmtf) paths="/redfish/v1/ /redfish/v1/Systems /redfish/v1/Systems/437XR1138R2 /redfish/v1/UpdateService/FirmwareInventory /redfish/v1/Systems/437XR1138R2/Bios" ;;
    ilo) paths="/redfish/v1/ /redfish/v1/Systems/ /redfish/v1/Systems/1/ /redfish/v1/UpdateService/FirmwareInventory/ /redfish/v1/systems/1/bios/" ;;
    openbmc) paths="/redfish/v1 /redfish/v1/Systems /redfish/v1/Systems/system /redfish/v1/UpdateService/FirmwareInventory /redfish/v1/Systems/system/Bios" ;;
  esac
  for p in $paths; do echo "url = \"$url$p\"" >>"$run/urls"; echo 'output = "/dev/null"' >>"$run/urls"; done
done <"$run/bmcs.txt"
reqs=$(( $(grep -c '^url' "$run/urls") * rounds ))
cpu0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
t2=$(date +%s.%N)
for _ in $(seq "$rounds"); do
  curl -sS --no-progress-meter --parallel --parallel-max 64 --cacert "$run/certs/ca.pem" -K "$run/curl.cfg" -K "$run/urls" \
    -w '%{http_code}\n' >"$run/codes"
  bad=$(grep -vc '^200$' "$run/codes" || true)
  [ "$bad" = 0 ] || { echo "measure: $bad requests did not answer 200" >&2; sort "$run/codes" | uniq -c >&2; exit 1; }
done
t3=$(date +%s.%N)
cpu1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
tck=$(getconf CLK_TCK)
awk -v n="$n" -v v="$vendor" -v up="$(awk -v a="$t0" -v b="$t1" "BEGIN { print b - a }")" -v w="$(awk -v a="$t2" -v b="$t3" "BEGIN { print b - a }")" -v r="$reqs" \
    -v rss="$rss" -v cpu="$(( cpu1 - cpu0 ))" -v tck="$tck" 'BEGIN {
  printf "BMCs %d (%s): up %.1f s; %d HTTPS GETs in %.1f s = %.0f req/s; emulator CPU %.1f s (%.2f ms/req); RSS %.0f MiB (%.0f KiB/BMC)\n",
    n, v, up, r, w, r / w, cpu / tck, 1000 * cpu / tck / r, rss / 1024, rss / n }'
