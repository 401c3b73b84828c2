#!/bin/bash
# rf_one.sh HOST:PORT: the same reads as `plumb bmc inventory` (power + BIOS + firmware) for one
# BMC with Debian's redfishtool, one redfishtool run per resource, links taken from payloads.
# Credentials come from $RF_CRED_FILE ("user:password"), read here, never printed.
set -euo pipefail
r=$1
IFS=: read -r user pw <"$RF_CRED_FILE"
rt() { redfishtool -r "$r" -u "$user" -p "$pw" -S Always -T 60 raw GET "$1"; }
links() { grep -o "\"$1[^\"]*\"" | tr -d '"'; }
sys=$(rt /redfish/v1/Systems | links /redfish/v1/Systems/ | head -1)
system=$(rt "$sys")                                              # PowerState, Status, Model...
bios=$(printf '%s' "$system" | links "$sys/Bios" | head -1)
settings=$(rt "$bios" | links "$bios/" | grep -i settings | head -1 || true)
[ -n "$settings" ] && rt "$settings" >/dev/null
inv=$(rt /redfish/v1/UpdateService | links /redfish/v1/UpdateService/FirmwareInventory | head -1)
count=0
for m in $(rt "$inv" | links "$inv/"); do
  rt "$m" >/dev/null
  count=$((count + 1))
done
echo "$r firmware=$count"
