#!/bin/bash
# redfish_emulator_faults.sh: the BMC emulator's fault injection and stateful details that the
# Redfish client's tests rely on, checked with curl over HTTPS (verified against the run's CA):
# 503 + Retry-After, slow answers, dropped connections, forced 412, session limit (per vendor
# status), failing task, BMC reboot (listener down, sessions lost), idle session expiry,
# paging and $expand rules, and resets reaching the linked testbed node through `tb ctl`.
# Prints "N passed, N failed"; exits non-zero on any failure.
set -u
src=${PLUMB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
bmc="$src/tests/testbed/redfish/bmc"
if [ -z "${RFC_NETNS:-}" ] && [ "$(id -u)" = 0 ] && unshare --net true 2>/dev/null; then
  exec env RFC_NETNS=1 unshare --net bash -c 'ip link set lo up && exec bash "$0"' "$0"
fi
bash "$bmc" mockups >/dev/null || exit 77   # the vendor modes' mockups (third-party data)
for t in curl python3 openssl jq; do
  command -v $t >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done
run=$(mktemp -d "${TMPDIR:-/tmp}/rffault.XXXXXX")
export BMC_RUN=$run/bmc
cleanup() { bash "$bmc" down; rm -rf "$run"; }
trap cleanup EXIT

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
ko() { fail=$((fail + 1)); echo "FAIL $*"; }
check() { local name=$1 o; shift
  if o=$("$@" 2>&1); then ok "$name"; else ko "$name"; printf '%s\n' "$o" | tail -5 | sed 's/^/     /'; fi; }

# Two BMCs linked to testbed nodes "alpha" (dmtf) and "beta" (ilo); a stand-in for
# `tb ctl ACTION NODE` records what the emulator asks of the nodes.
printf 'alpha 127.10.0.2 22\nbeta 127.10.0.3 22\ngamma 127.10.0.4 22\n' >"$run/nodes.txt"
cat >"$run/fake-tb-ctl" <<EOF
#!/bin/bash
echo "\$1 \$2" >>"$run/node-actions"
EOF
chmod +x "$run/fake-tb-ctl"
if [ -n "${RFC_NETNS:-}" ]; then addr_opts=(--port 8443); else addr_opts=(--ports $((20000 + RANDOM % 20000))); fi
bash "$bmc" up --nodes "$run/nodes.txt" --vendor-of beta=ilo --node-ctl "$run/fake-tb-ctl" \
  --option task_duration=0.5 --option power_delay=0.2 --option session_timeout=2 \
  --option bmc_reboot_seconds=2 --option-of gamma:task_mode=body-only \
  --option-of gamma:session_location=absolute --option-of gamma:page_size=1 \
  --option-of gamma:if_match=required "${addr_opts[@]}" || { echo "0 passed, 1 failed"; exit 1; }
ca=$BMC_RUN/certs/ca.pem
ctlport=$(jq -r .control_port "$BMC_RUN/ready.json")
IFS=: read -r user password <"$BMC_RUN/credentials"
( umask 077; printf 'user = "%s:%s"\n' "$user" "$password" >"$run/curl.cfg" )
url() { awk -v n="$1" '$1 == n { print $2 }' "$BMC_RUN/bmcs.txt"; }
A=$(url alpha) B=$(url beta) G=$(url gamma)
# code URL [curl args]: HTTP status (000 when no answer); body in $run/body, headers in $run/hdr
code() { local u=$1; shift; curl -sS -o "$run/body" -D "$run/hdr" -w '%{http_code}' --cacert "$ca" -K "$run/curl.cfg" "$@" "$u" 2>"$run/err"; }
fault() { curl -sS -o /dev/null -X POST -d "$2" "http://127.0.0.1:$ctlport/bmcs/$1/faults"; }
clear() { curl -sS -o /dev/null -X DELETE "http://127.0.0.1:$ctlport/bmcs/$1/faults"; }
state() { curl -sS "http://127.0.0.1:$ctlport/bmcs/$1"; }
login() { # URL -> prints "token location"
  curl -sS -D - -o /dev/null --cacert "$ca" -H 'Content-Type: application/json' \
    -d "$(jq -n --arg u "$user" --arg p "$password" '{UserName: $u, Password: $p}')" "$1$2" |
    awk 'tolower($1) == "x-auth-token:" { t = $2 } tolower($1) == "location:" { l = $2 } END { print t, l }' | tr -d '\r'; }

eventually() { for _ in $(seq 80); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done; "$@"; }
is_code() { [ "$(code "$1")" = "$2" ]; }
sys_a=/redfish/v1/Systems/437XR1138R2
check "baseline GET 200" test "$(code "$A$sys_a")" = 200

# 503 + Retry-After for the next N requests
fault alpha '{"unavailable": 2, "retry_after": 3}'
c1=$(code "$A$sys_a"); ra=$(awk 'tolower($1) == "retry-after:" { print $2 }' "$run/hdr" | tr -d '\r')
c2=$(code "$A$sys_a"); c3=$(code "$A$sys_a")
check "unavailable=2: 503, 503, then 200" test "$c1 $c2 $c3" = "503 503 200"
check "503 carries Retry-After: 3" test "$ra" = 3

# slow answers
fault alpha '{"delay": 1.0, "delay_count": 1}'
t1=$(curl -sS -o /dev/null -w '%{time_total}' --cacert "$ca" -K "$run/curl.cfg" "$A$sys_a")
t2=$(curl -sS -o /dev/null -w '%{time_total}' --cacert "$ca" -K "$run/curl.cfg" "$A$sys_a")
check "delay=1 for one request (took ${t1}s, then ${t2}s)" awk -v a="$t1" -v b="$t2" 'BEGIN { exit !(a >= 1.0 && b < 1.0) }'
fault alpha '{"delay": 3}'
check "a client timeout fires on a slow BMC" bash -c '! curl -sS -o /dev/null --max-time 1 --cacert "$1" -K "$2" "$3"' _ "$ca" "$run/curl.cfg" "$A$sys_a"
clear alpha

# dropped connection
fault alpha '{"drop": 1}'
c1=$(code "$A$sys_a"); c2=$(code "$A$sys_a")
check "drop=1: no answer, then 200 ($c1 $c2)" test "$c1 $c2" = "000 200"

# forced 412 on the next PATCH, even with the right ETag
etag=$(curl -sS -D - -o /dev/null --cacert "$ca" -K "$run/curl.cfg" "$A$sys_a" | awk 'tolower($1) == "etag:" { print $2 }' | tr -d '\r')
fault alpha '{"precondition": 1}'
c1=$(code "$A$sys_a" -X PATCH -H "If-Match: $etag" -H 'Content-Type: application/json' -d '{"AssetTag": "t1"}')
c2=$(code "$A$sys_a" -X PATCH -H "If-Match: $etag" -H 'Content-Type: application/json' -d '{"AssetTag": "t1"}')
check "precondition=1: 412 then 204 ($c1 $c2)" test "$c1 $c2" = "412 204"
c3=$(code "$A$sys_a" -X PATCH -H "If-Match: $etag" -H 'Content-Type: application/json' -d '{"AssetTag": "t2"}')
check "the old ETag is stale after a write: 412" test "$c3" = 412

# session limit: dmtf answers 503, ilo 400
for n in alpha beta; do
  u=$(url $n); coll=$(curl -sS --cacert "$ca" "$u/redfish/v1/" | jq -r '.Links.Sessions["@odata.id"]')
  fault $n '{"session_limit": 1}'
  read -r t1 l1 < <(login "$u" "$coll")
  c2=$(code "$u$coll" -H 'Content-Type: application/json' -d "$(jq -n --arg u "$user" --arg p "$password" '{UserName: $u, Password: $p}')")
  want=503; [ $n = beta ] && want=400
  check "$n: session limit 1: second login -> $want" bash -c '[ "$1" = "$2" ] && grep -q "Limit\|limit" "$3"' _ "$c2" "$want" "$run/body"
  check "$n: the limit response holds @Message.ExtendedInfo" jq -e '.error["@Message.ExtendedInfo"][0].MessageId' "$run/body"
  check "$n: logout frees the slot" test "$(code "$u$l1" -X DELETE)" = 204
  check "$n: login works again" test "$(code "$u$coll" -H 'Content-Type: application/json' -d "$(jq -n --arg u "$user" --arg p "$password" '{UserName: $u, Password: $p}')")" = 201
  clear $n
done

# expire every session now; idle timeout (session_timeout=2)
coll=/redfish/v1/SessionService/Sessions
read -r tok _ < <(login "$A" "$coll")
check "token works" test "$(code "$A$sys_a" -K /dev/null -H "X-Auth-Token: $tok")" = 200
fault alpha '{"expire_sessions": true}'
check "expire_sessions: token -> 401" test "$(code "$A$sys_a" -K /dev/null -H "X-Auth-Token: $tok")" = 401
read -r tok _ < <(login "$A" "$coll")
sleep 2.3
check "idle session expires after SessionTimeout -> 401" test "$(code "$A$sys_a" -K /dev/null -H "X-Auth-Token: $tok")" = 401
check "SessionService shows the SessionTimeout in force" test "$(curl -sS --cacert "$ca" -K "$run/curl.cfg" "$A/redfish/v1/SessionService" | jq .SessionTimeout)" = 2

# a task that fails
fw=/redfish/v1/UpdateService/FirmwareInventory/BMC
v0=$(curl -sS --cacert "$ca" -K "$run/curl.cfg" "$A$fw" | jq -r .Version)
# The task is held Running (update_hold) until the monitor has been read: a state, not a race
# against its 0.5 s duration on a loaded machine.
fault alpha '{"task_fail": 1, "update_hold": 1}'
c=$(code "$A/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate" -H 'Content-Type: application/json' -d '{"ImageURI": "http://127.0.0.1/BMC-9.9.9.bin"}')
mon=$(awk 'tolower($1) == "location:" { print $2 }' "$run/hdr" | tr -d '\r')
check "SimpleUpdate -> 202 with a task in the body" bash -c '[ "$1" = 202 ] && jq -e ".TaskState" "$2"' _ "$c" "$run/body"
check "task monitor 202 while running" test "$(code "$A$mon")" = 202
fault alpha '{"update_hold": 0}'
check "task_fail: monitor shows Exception" eventually bash -c '[ "$(curl -sS --cacert "$1" -K "$2" "$3" | jq -r .TaskState)" = Exception ]' _ "$ca" "$run/curl.cfg" "$A$mon"
check "task_fail: version unchanged" test "$(curl -sS --cacert "$ca" -K "$run/curl.cfg" "$A$fw" | jq -r .Version)" = "$v0"
c=$(code "$A/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate" -H 'Content-Type: application/json' -d '{"ImageURI": "http://127.0.0.1/NoSuchPart-1.bin"}')
check "image name matching no component -> 400" test "$c" = 400
c=$(code "$A/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate" -H 'Content-Type: application/json' -d '{"TransferProtocol": "HTTP"}')
check "SimpleUpdate without ImageURI -> 400 ActionParameterMissing" bash -c '[ "$1" = 400 ] && grep -q ActionParameterMissing "$2"' _ "$c" "$run/body"

# BMC reboot: Manager.Reset and the down fault
read -r tok _ < <(login "$A" "$coll")
check "Manager.Reset accepted" test "$(code "$A/redfish/v1/Managers/BMC/Actions/Manager.Reset" -H 'Content-Type: application/json' -d '{"ResetType": "GracefulRestart"}')" = 204
check "BMC rebooting: connection refused" eventually is_code "$A$sys_a" 000
check "BMC back after its reboot" eventually is_code "$A$sys_a" 200
check "sessions lost across the BMC reboot" test "$(code "$A$sys_a" -K /dev/null -H "X-Auth-Token: $tok")" = 401
fault beta '{"down": 2}'
check "down=2: beta refuses connections" eventually is_code "$B/redfish/v1/" 000
check "down=2: beta answers again" eventually is_code "$B/redfish/v1/" 200

# paging, $top/$skip and $expand where advertised
fwc=/redfish/v1/UpdateService/FirmwareInventory/
check "ilo: first page has 10 of 27 members" bash -c '[ "$(curl -sS --cacert "$1" -K "$2" "$3" | jq -r "[(.Members|length), .\"Members@odata.count\"]|map(tostring)|join(\" \")")" = "10 27" ]' _ "$ca" "$run/curl.cfg" "$B$fwc"
check "ilo: walking nextLink yields 27 distinct members" bash -c '
  next=$3; all=""
  while [ -n "$next" ]; do p=$(curl -sS --cacert "$1" -K "$2" "$4$next"); all="$all $(echo "$p" | jq -r ".Members[][\"@odata.id\"]")"; next=$(echo "$p" | jq -r ".\"Members@odata.nextLink\" // empty"); done
  [ "$(echo $all | tr " " "\n" | sort -u | wc -l)" = 27 ]' _ "$ca" "$run/curl.cfg" "$fwc" "$B"
check "ilo: \$expand=. expands members" bash -c '[ "$(curl -sS --cacert "$1" -K "$2" "$3?\$expand=.(\$levels=1)" | jq -r ".Members[0].Version")" != null ]' _ "$ca" "$run/curl.cfg" "$B$fwc"
check "ilo: \$expand=* not advertised -> 400" test "$(code "$B$fwc?\$expand=*")" = 400
check "dmtf: \$expand=* expands members" bash -c '[ "$(curl -sS --cacert "$1" -K "$2" "$3?\$expand=*" | jq -r ".Members[0].Version")" != null ]' _ "$ca" "$run/curl.cfg" "$A/redfish/v1/UpdateService/FirmwareInventory"
check "dmtf: \$top=1&\$skip=1" bash -c '[ "$(curl -sS --cacert "$1" -K "$2" "$3?\$top=1&\$skip=1" | jq -r ".Members[0][\"@odata.id\"]")" = /redfish/v1/UpdateService/FirmwareInventory/SS ]' _ "$ca" "$run/curl.cfg" "$A/redfish/v1/UpdateService/FirmwareInventory"
check "ilo: captured iLO error body served as 404" test "$(code "$B/redfish/v1/Chassis/1/PCIeDevices/239/")" = 404

# per-BMC options (gamma): task in the body only, absolute session Location, paging at 1,
# If-Match required
read -r _ gloc < <(login "$G" /redfish/v1/SessionService/Sessions)
check "gamma: absolute session Location ($gloc)" test "$gloc" = "$G/redfish/v1/SessionService/Sessions/${gloc##*/}"
c=$(code "$G/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate" -H 'Content-Type: application/json' -d '{"ImageURI": "http://127.0.0.1/BIOS-P79 v9.bin"}')
check "gamma: update -> 202, task in the body, no Location" bash -c '[ "$1" = 202 ] && jq -e .TaskState "$2" && ! grep -qi "^location:" "$3"' _ "$c" "$run/body" "$run/hdr"
gtask=$(jq -r '.["@odata.id"]' "$run/body")
check "gamma: the task completes at its @odata.id" eventually bash -c '[ "$(curl -sS --cacert "$1" -K "$2" "$3" | jq -r .TaskState)" = Completed ]' _ "$ca" "$run/curl.cfg" "$G$gtask"
check "gamma: paging at 1 member (3 pages)" bash -c '[ "$(curl -sS --cacert "$1" -K "$2" "$3" | jq -r "[(.Members|length), .\"Members@odata.nextLink\"]|map(tostring)|join(\" \")")" = "1 /redfish/v1/UpdateService/FirmwareInventory?\$skip=1" ]' _ "$ca" "$run/curl.cfg" "$G/redfish/v1/UpdateService/FirmwareInventory"
check "gamma: PATCH without If-Match -> 428" test "$(code "$G$sys_a" -X PATCH -H 'Content-Type: application/json' -d '{"AssetTag": "g"}')" = 428
check "alpha: same PATCH without If-Match accepted" test "$(code "$A$sys_a" -X PATCH -H 'Content-Type: application/json' -d '{"AssetTag": "a"}')" = 204

# resets reach the linked testbed node; PowerState follows
rt() { code "$A/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset" -H 'Content-Type: application/json' -d "{\"ResetType\": \"$1\"}"; }
power() { curl -sS --cacert "$ca" -K "$run/curl.cfg" "$A$sys_a" | jq -r .PowerState; }
wait_power() { for _ in $(seq 40); do [ "$(power)" = "$1" ] && return 0; sleep 0.1; done; return 1; }
: >"$run/node-actions"
check "ForceOff -> 204" test "$(rt ForceOff)" = 204
check "PowerState Off" wait_power Off
check "reset while off: On -> 204" test "$(rt On)" = 204
check "PowerState On" wait_power On
check "ForceRestart -> PoweringOff ... On" bash -c '[ "$1" = 204 ]' _ "$(rt ForceRestart)"
check "PowerState On after restart" wait_power On
sleep 0.2
check "node actions: poweroff, poweron, reboot of alpha" test "$(tr '\n' ',' <"$run/node-actions")" = "poweroff alpha,poweron alpha,reboot alpha,"
check "node action results recorded" test "$(state alpha | jq '[.node_events[].rc] | length')" = 3

check "password never in the emulator's logs" bash -c '! grep -rqF -- "$1" "$2/emulator.log" "$2/requests.log"' _ "$password" "$BMC_RUN"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
