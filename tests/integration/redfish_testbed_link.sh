#!/bin/bash
# redfish_testbed_link.sh: the BMC emulator linked to the SSH testbed (`bmc up --tb`), so that
# in-band and out-of-band facts agree: a Redfish reset reboots the node (new boot_id) and
# applies pending BIOS settings; a node powered off in-band reads PowerState Off; Reset On
# boots it; `tb down` stops the emulator too. Prints "N passed, N failed".
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
eventually() { for _ in $(seq 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done; "$@"; }
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

# ForceOff via Redfish: the node goes off and PowerState stays Off throughout
check "ForceOff via Redfish" test "$(reset "$U1" "$s1/Actions/ComputerSystem.Reset" ForceOff)" = 204
check "PowerState Off at once" is_power "$U1" "$s1" Off
check "n1 is off in the testbed" eventually bash -c '[ "$("$1" ctl status n1)" = off ]' _ "$TB"
check "PowerState still Off" is_power "$U1" "$s1" Off

# in-band power off is seen out of band; Reset On boots the node
s2=/redfish/v1/Systems/system
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
