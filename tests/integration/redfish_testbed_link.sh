#!/bin/bash
# redfish_testbed_link.sh: the BMC emulator linked to the SSH testbed (`bmc up --tb`), so that
# in-band and out-of-band facts agree: a Redfish reset reboots the node (new boot_id) and
# applies pending BIOS settings; so does any other reboot of the node (an in-band `reboot`,
# `tb ctl reboot`), which also applies firmware staged for the next reset; a ForceOff held on
# its way to the node (hold_node) reads PoweringOff, not Off, and no On overtakes it; a node
# powered off in-band reads PowerState Off; Reset On boots it; `tb down` stops the emulator
# too. Prints "N passed, N failed".
set -u
src=${PLUMB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
TB=$src/tests/testbed/tb
bmc=$src/tests/testbed/redfish/bmc
[ "$(id -u)" = 0 ] || { echo "SKIP: the testbed needs root"; exit 77; }
"$bmc" mockups >/dev/null || exit 77   # the vendor modes' mockups (third-party data)
TB_RUN=$(mktemp -d "${TMPDIR:-/tmp}/plumb-tb-rf.XXXXXX")
export TB_RUN
export TB_DOWNTIME=1
unset BMC_RUN
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
ko() { fail=$((fail + 1)); echo "FAIL $*"; }
check() { local name=$1 o; shift
  if o=$("$@" 2>&1); then ok "$name"; else ko "$name"; printf '%s\n' "$o" | tail -5 | sed 's/^/     /'; fi; }
# waits for a state (up to 60 s: the machine may be loaded), never for a time
eventually() { for _ in $(seq 600); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done; "$@"; }
cleanup() { "$TB" down >/dev/null 2>&1; rm -rf "$TB_RUN"; }
trap cleanup EXIT

"$TB" up 2 >/dev/null || { echo "FAIL tb up"; echo "0 passed, 1 failed"; exit 1; }
"$bmc" up --tb --vendor-of n1=dmtf --vendor-of n2=openbmc --option power_delay=0.2 ||
  { echo "FAIL bmc up --tb"; echo "0 passed, 1 failed"; exit 1; }
rf=$TB_RUN/redfish
IFS=: read -r user password <"$rf/credentials"
( umask 077; printf 'user = "%s:%s"\n' "$user" "$password" >"$rf/curl.cfg" )
url() { awk -v n="$1" '$1 == n { print $2 }' "$rf/bmcs.txt"; }
# Redfish calls run inside the testbed's netns, where the BMCs live.
rfc() { "$TB" exec curl -sS --cacert "$rf/certs/ca.pem" -K "$rf/curl.cfg" "$@"; }
power() { rfc "$1$2" | jq -r .PowerState; }
is_power() { [ "$(power "$1" "$2")" = "$3" ]; }
reset() { rfc -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -d "{\"ResetType\": \"$3\"}" "$1$2"; }
boot_id() { "$TB" ssh "$1" cat /proc/sys/kernel/random/boot_id 2>/dev/null; }

U1=$(url n1) U2=$(url n2)
check "BMC addresses follow the node map (127.10.0.2 -> 127.11.0.2)" test "$U1" = https://127.11.0.2:8443
check "n1's BMC answers inside the testbed netns" test "$(power "$U1" /redfish/v1/Systems/437XR1138R2)" = On
check "emulator registered for tb down" test -f "$TB_RUN/pids/bmc-emulator.pid"

# a reset reboots the node and applies the pending BIOS change
s1=/redfish/v1/Systems/437XR1138R2
b0=$(boot_id n1)
check "n1 reachable over ssh" test -n "$b0"
code=$(rfc -o /dev/null -w '%{http_code}' -X PATCH -H 'If-Match: *' -H 'Content-Type: application/json' \
  -d '{"Attributes": {"ProcTurboMode": "Disabled"}}' "$U1$s1/Bios/Settings")
check "BIOS change staged" test "$code" = 204
check "ForceRestart via Redfish" test "$(reset "$U1" "$s1/Actions/ComputerSystem.Reset" ForceRestart)" = 204
check "the emulator asked the testbed to reboot n1" eventually bash -c '"$1" state n1 | jq -e ".node_events[-1] | .action == \"reboot\" and .rc == 0"' _ "$bmc"
check "n1 comes back up" "$TB" ctl wait-up n1
b1=$(boot_id n1)
check "n1 has a new boot_id ($b0 -> $b1)" test -n "$b1" -a "$b0" != "$b1"
check "PowerState On after the reset" eventually is_power "$U1" "$s1" On
check "pending BIOS applied on that reset" test "$(rfc "$U1$s1/Bios" | jq -r .Attributes.ProcTurboMode)" = Disabled

# ForceOff then On, the ForceOff held on its way to the node (the emulator's hold_node fault):
# the BMC does not say Off while the node runs, refuses an On meanwhile, says Off once the node
# is off, and the On a client sends then boots the node. (Before: Off at once, the On's poweron
# reached the node first, the poweroff after it, and the node stayed off with the BMC saying On.)
is_waiting() { [ "$("$bmc" state "$1" | jq -r '.node_waiting | join(",")')" = "$2" ]; }
"$bmc" fault n1 hold_node=poweroff
check "ForceOff via Redfish" test "$(reset "$U1" "$s1/Actions/ComputerSystem.Reset" ForceOff)" = 204
check "the poweroff is held on its way to n1" eventually is_waiting n1 poweroff
check "PowerState PoweringOff while n1 still runs" test "$(power "$U1" "$s1")/$("$TB" ctl status n1)" = PoweringOff/up
check "an On meanwhile is refused (409)" test "$(reset "$U1" "$s1/Actions/ComputerSystem.Reset" On)" = 409
"$bmc" clear n1   # lets the poweroff go
check "PowerState Off once released" eventually is_power "$U1" "$s1" Off
check "  and n1 is off when it says so" test "$("$TB" ctl status n1)" = off
check "On via Redfish" test "$(reset "$U1" "$s1/Actions/ComputerSystem.Reset" On)" = 204
check "n1 boots" "$TB" ctl wait-up n1
check "PowerState On" eventually is_power "$U1" "$s1" On
check "the node got poweroff, then poweron" bash -c '"$1" state n1 | jq -e "[.node_events[-2:][] | .action] == [\"poweroff\", \"poweron\"] and all(.node_events[-2:][]; .rc == 0 and .settled)"' _ "$bmc"

# ForceOff via Redfish: the node goes off and PowerState stays Off
check "ForceOff via Redfish" test "$(reset "$U1" "$s1/Actions/ComputerSystem.Reset" ForceOff)" = 204
check "PowerState Off" eventually is_power "$U1" "$s1" Off
check "n1 is off in the testbed" test "$("$TB" ctl status n1)" = off
check "PowerState still Off" is_power "$U1" "$s1" Off

# Any reboot of the node is a boot for its BMC: pending BIOS settings and firmware staged for
# the next reset take effect at the node's next boot, as at a real POST, whoever rebooted it.
s2=/redfish/v1/Systems/system
fw2=/redfish/v1/UpdateService/FirmwareInventory/bios_active
node_boot() { cat "$TB_RUN/nodes/$1/ctl/boot_id"; }
attr2() { rfc "$U2$s2/Bios" | jq -r ".Attributes.$1"; }
turbo() { attr2 ProcTurboMode; }
is_attr2() { [ "$(attr2 "$1")" = "$2" ]; }
patch2() { rfc -o /dev/null -w '%{http_code}' -X PATCH -H 'If-Match: *' -H 'Content-Type: application/json' \
  -d "{\"Attributes\": {\"$1\": \"$2\"}}" "$U2$s2/Bios/Settings"; }
check "n2: BIOS change staged" test "$(patch2 ProcTurboMode Disabled)" = 200
printf 'image' >"$rf/bios_active-1.5.0.bin"
push=$(rfc "$U2/redfish/v1/UpdateService" | jq -r .MultipartHttpPushUri)
code=$(rfc -o /dev/null -w '%{http_code}' -F 'UpdateParameters={"Targets":[]};type=application/json' \
  -F "UpdateFile=@$rf/bios_active-1.5.0.bin;type=application/octet-stream" "$U2$push")
check "n2: firmware pushed (202)" test "$code" = 202
check "n2: firmware staged for the next reset" eventually bash -c '"$1" state n2 | jq -e "any(.firmware[]; .staged == \"1.5.0\")"' _ "$bmc"
check "n2: nothing applied without a boot" test "$(turbo)/$(rfc "$U2$fw2" | jq -r .Version)" = Enabled/1.4.0
b0=$(node_boot n2)
"$TB" ssh n2 reboot >/dev/null 2>&1
check "n2 rebooted in-band (new boot_id)" eventually bash -c '[ "$(cat "$1")" != "$2" ]' _ "$TB_RUN/nodes/n2/ctl/boot_id" "$b0"
check "n2 comes back up" "$TB" ctl wait-up n2
check "n2: pending BIOS applied at that boot" test "$(turbo)" = Disabled
check "n2: nothing pending after it" test "$(rfc "$U2$s2/Bios/Settings" | jq -S .Attributes)" = "$(rfc "$U2$s2/Bios" | jq -S .Attributes)"
check "n2: staged firmware applied at that boot" test "$(rfc "$U2$fw2" | jq -r .Version)" = 1.5.0
check "n2: one boot, and the BMC did nothing to the node" bash -c '"$1" state n2 | jq -e ".boots == 1 and .node_events == []"' _ "$bmc"
check "n2: another BIOS change staged" test "$(attr2 PowerProfile)/$(patch2 PowerProfile Balanced)" = MaxPerf/200
b0=$(node_boot n2)
"$TB" ctl reboot n2
check "n2 power-cycled with tb ctl (new boot_id)" eventually bash -c '[ "$(cat "$1")" != "$2" ]' _ "$TB_RUN/nodes/n2/ctl/boot_id" "$b0"
check "n2: applied at that boot too" eventually is_attr2 PowerProfile Balanced
"$TB" ctl wait-up n2 >/dev/null

# in-band power off is seen out of band; Reset On boots the node
"$TB" ssh n2 poweroff >/dev/null 2>&1
check "n2 powered off in-band" eventually bash -c '[ "$("$1" ctl status n2)" = off ]' _ "$TB"
check "n2's BMC reads PowerState Off" eventually is_power "$U2" "$s2" Off
check "Reset On via Redfish" test "$(reset "$U2" "$s2/Actions/ComputerSystem.Reset" On)" = 204
check "n2 boots again" "$TB" ctl wait-up n2
check "n2's BMC reads PowerState On" eventually is_power "$U2" "$s2" On

read -r epid _ <"$rf/emulator.pid"
"$TB" down >/dev/null 2>&1
check "tb down stopped the emulator" eventually bash -c '! kill -0 "$1"' _ "$epid"
check "password never in the emulator's logs" bash -c '! grep -rqF -- "$1" "$2/emulator.log" "$2/requests.log"' _ "$password" "$rf"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
