#!/bin/bash
# redfish_conformance.sh: Debian's redfishtool (a real third-party Redfish client) against the
# testbed's BMC emulator over HTTPS, in each vendor mode (dmtf, ilo, openbmc): login/logout,
# Systems list/get, reset, BIOS patch, raw GETs of UpdateService and Bios, firmware updates,
# and the state changes behind them (pending -> current on reset, ETags that change, session
# count back to 0). curl checks what redfishtool cannot: TLS verification against the run's CA
# (redfishtool never verifies), error bodies, If-Match variants and multipart push.
# Prints "N passed, N failed"; exits non-zero on any failure.
set -u
src=${PLUMB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
bmc="$src/tests/testbed/redfish/bmc"

# A private network namespace when we can (root): no clash with anything on the host, and the
# BMCs sit on their own loopback addresses like in the testbed. Otherwise 127.0.0.1 ports.
if [ -z "${RFC_NETNS:-}" ] && [ "$(id -u)" = 0 ] && unshare --net true 2>/dev/null; then
  exec env RFC_NETNS=1 unshare --net bash -c 'ip link set lo up && exec bash "$0"' "$0"
fi

for t in redfishtool curl python3 openssl jq; do
  command -v $t >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done
bash "$bmc" mockups >/dev/null || exit 77   # the vendor modes' mockups (third-party data)
run=$(mktemp -d "${TMPDIR:-/tmp}/rfconf.XXXXXX")
export BMC_RUN=$run
cleanup() { bash "$bmc" down; rm -rf "$run"; }
trap cleanup EXIT

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
ko() { fail=$((fail + 1)); echo "FAIL $*"; }
check() { # NAME CMD...: runs CMD, reports ok/FAIL (with the tail of its output on failure)
  local name=$1 o; shift
  if o=$("$@" 2>&1); then ok "$name"; else ko "$name"; printf '%s\n' "$o" | tail -5 | sed 's/^/     /'; fi; }
# jv [-S] FILTER: a jq filter over the JSON document on stdin, raw output
jv() { jq -r "$@"; }

if [ -n "${RFC_NETNS:-}" ]; then addr_opts=(--port 8443); else addr_opts=(--ports $((20000 + RANDOM % 20000))); fi
bash "$bmc" up --count 6 --vendor mixed --vendor-of n4=dmtf --vendor-of n5=dmtf --vendor-of n6=dmtf \
  --tls-of n4=wrong-ca --tls-of n5=wrong-name --tls-of n6=self-signed "${addr_opts[@]}" \
  --option task_duration=1.5 --option power_delay=0.3 || { echo "0 passed, 1 failed"; exit 1; }
ca=$run/certs/ca.pem
IFS=: read -r user password <"$run/credentials"
# Credentials go through 0600 files, never on a command line.
( umask 077; printf '{"user": "%s", "password": "%s"}\n' "$user" "$password" >"$run/rft.json"
  printf 'user = "%s:%s"\n' "$user" "$password" >"$run/curl.cfg" )
hostport() { awk -v n="$1" '$1 == n { sub("https://", "", $2); print $2 }' "$run/bmcs.txt"; }

rft() { redfishtool -r "$HP" -c "$run/rft.json" -S Always -T 10 "$@"; }
cget() { curl -sS --cacert "$ca" -K "$run/curl.cfg" "https://$HP$1"; }
# ccode METHOD PATH [curl args...]: prints the HTTP status only
ccode() { local m=$1 p=$2; shift 2; curl -sS -o "$run/$name.body" -w '%{http_code}' --cacert "$ca" -K "$run/curl.cfg" -X "$m" "$@" "https://$HP$p"; }
ctlport=$(jq -r .control_port "$run/ready.json")
sessions() { curl -sS "http://127.0.0.1:$ctlport/bmcs/$1/sessions" | jq -r .sessions; }
etag_of() { cget "$1" | jv '.["@odata.etag"]'; }
wait_power() { # system-link state
  for _ in $(seq 50); do [ "$(cget "$1" | jv '.["PowerState"]')" = "$2" ] && return 0; sleep 0.1; done; return 1; }
eventually() { # CMD...: true within ~8 s (the emulator's timers run late on a loaded machine)
  for _ in $(seq 80); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done; "$@"; }
is() { [ "$(cget "$1" | jq -r "$2")" = "$3" ]; }   # is LINK FILTER VALUE
code_is() { [ "$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$ca" -K "$run/curl.cfg" "https://$HP$1")" = "$2" ]; }
wait_version() { # link version-regex (anchored): iLO reports a version with its build date
  local v
  for _ in $(seq 60); do v=$(cget "$1" | jv '.["Version"]'); [[ $v =~ ^$2$ ]] && return 0; sleep 0.1; done
  echo "Version is '$v', expected /^$2\$/"; return 1; }
ILO_DATE=' [A-Z][a-z]{2} [0-9]{2} [0-9]{4}'     # "2.70 May 16 2022"
ROM_DATE=' \([0-9]{2}/[0-9]{2}/[0-9]{4}\)'      # "A47 v2.58 (05/19/2022)"

vendor_checks() {
  local name=$1 HP vendor attr new ro int reset badreset out token loc sesscoll us fwc sys bios settings old e1 e2 code monitor push pages se1
  HP=$(hostport $name)
  vendor=$(awk -v n=$name '$1 == n { print $3 }' "$run/bmcs.txt")
  echo "--- $name: $vendor at https://$HP"
  case $vendor in
    dmtf) attr=ProcTurboMode; new=Disabled; ro=SystemSerialNumber; int=ProcCoreDisable; reset=GracefulRestart; badreset=PowerCycle ;;
    ilo) attr=WorkloadProfile; new=LowLatency; ro=BootMode; int=VlanId; reset=GracefulRestart; badreset=PowerCycle ;;
    openbmc) attr=WorkloadProfile; new=HPC; ro=SystemSerialNumber; int=ProcCoreDisable; reset=ForceRestart; badreset=PushPowerButton ;;
  esac

  # TLS and discovery
  check "$vendor: TLS verifies against the run's CA (curl)" curl -sS -o /dev/null --cacert "$ca" "https://$HP/redfish/v1/"
  check "$vendor: versions" rft versions
  check "$vendor: service root without credentials" redfishtool -r "$HP" -S Always -A None root
  check "$vendor: Systems without credentials is 401" test "$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$ca" "https://$HP$(cget /redfish/v1/ | jv '.["Systems"]["@odata.id"]')")" = 401
  check "$vendor: Systems list" rft Systems list
  check "$vendor: Systems -1 get" rft Systems -1
  check "$vendor: PowerState On" test "$(rft Systems -1 -P PowerState | jv '.["PowerState"]')" = On
  check "$vendor: wrong password refused" bash -c '! redfishtool -r "$1" -u "$2" -p wrong-password -S Always Systems list' _ "$HP" "$user"

  # Sessions: login, listed in the collection, logout, count back to 0
  out=$(rft -A Session SessionService login)
  token=$(echo "$out" | jv '.["X-Auth-Token"]'); loc=$(echo "$out" | jv '.["SessionLocation"]')
  check "$vendor: session login gives token + Location" test -n "$token" -a -n "$loc"
  check "$vendor: one live session" test "$(sessions $name)" = 1
  sesscoll=$(cget /redfish/v1/ | jv '.["Links"]["Sessions"]["@odata.id"]')
  check "$vendor: session listed in Sessions" bash -c 'curl -sS --cacert "$1" -H "X-Auth-Token: $2" "https://$3$4" | grep -q "$5"' _ "$ca" "$token" "$HP" "$sesscoll" "$loc"
  check "$vendor: request with X-Auth-Token" bash -c 'redfishtool -r "$1" -S Always -A Session -t "$2" Systems -1 -P PowerState' _ "$HP" "$token"
  check "$vendor: logout" redfishtool -r "$HP" -S Always -A Session -t "$token" SessionService logout -l "$loc"
  check "$vendor: session count back to 0" test "$(sessions $name)" = 0
  check "$vendor: token dead after logout" test "$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$ca" -H "X-Auth-Token: $token" "https://$HP$sesscoll")" = 401
  check "$vendor: -A Session full cycle" rft -A Session Systems -1 -P PowerState
  check "$vendor: session count 0 after the cycle" test "$(sessions $name)" = 0

  # UpdateService and Bios raw GETs, found by links
  us=$(cget /redfish/v1/ | jv '.["UpdateService"]["@odata.id"]')
  check "$vendor: raw GET UpdateService" rft raw GET "$us"
  fwc=$(cget "$us" | jv '.["FirmwareInventory"]["@odata.id"]')
  check "$vendor: raw GET FirmwareInventory" rft raw GET "$fwc"
  sys=$(cget "$(cget /redfish/v1/ | jv '.["Systems"]["@odata.id"]')" | jv '.["Members"][0]["@odata.id"]')
  bios=$(cget "$sys" | jv '.["Bios"]["@odata.id"]')
  check "$vendor: raw GET Bios" rft raw GET "$bios"
  settings=$(cget "$bios" | jv '.["@Redfish.Settings"]["SettingsObject"]["@odata.id"]')
  check "$vendor: raw GET Bios settings" rft raw GET "$settings"
  old=$(cget "$bios" | jv ".Attributes[\"$attr\"]")

  # BIOS: patch -> pending (registry-validated), ETag changes
  e1=$(etag_of "$settings")
  check "$vendor: BIOS patch $attr=$new" rft raw PATCH "$settings" -d "{\"Attributes\": {\"$attr\": \"$new\"}}"
  e2=$(etag_of "$settings")
  check "$vendor: settings ETag changed on write ($e1 -> $e2)" test -n "$e1" -a "$e1" != "$e2"
  check "$vendor: pending holds $attr=$new" test "$(cget "$settings" | jv ".Attributes[\"$attr\"]")" = "$new"
  check "$vendor: current still $attr=$old" test "$(cget "$bios" | jv ".Attributes[\"$attr\"]")" = "$old"
  check "$vendor: unknown attribute refused" bash -c '! redfishtool -r "$1" -c "$2" -S Always raw PATCH "$3" -d "{\"Attributes\": {\"NoSuchAttr\": \"x\"}}"' _ "$HP" "$run/rft.json" "$settings"
  code=$(ccode PATCH "$settings" -H "If-Match: *" -H 'Content-Type: application/json' -d "{\"Attributes\": {\"$attr\": \"NotAValue\"}}")
  check "$vendor: value not in list -> 400 PropertyValueNotInList" bash -c '[ "$1" = 400 ] && grep -q PropertyValueNotInList "$2"' _ "$code" "$run/$name.body"
  code=$(ccode PATCH "$settings" -H "If-Match: *" -H 'Content-Type: application/json' -d "{\"Attributes\": {\"$ro\": \"x\"}}")
  check "$vendor: read-only attribute -> 400 PropertyNotWritable" bash -c '[ "$1" = 400 ] && grep -q PropertyNotWritable "$2"' _ "$code" "$run/$name.body"
  code=$(ccode PATCH "$settings" -H "If-Match: *" -H 'Content-Type: application/json' -d "{\"Attributes\": {\"$int\": \"seven\"}}")
  check "$vendor: wrong type -> 400 PropertyValueTypeError" bash -c '[ "$1" = 400 ] && grep -q PropertyValueTypeError "$2"' _ "$code" "$run/$name.body"
  code=$(ccode PATCH "$settings" -H 'If-Match: "stale"' -H 'Content-Type: application/json' -d "{\"Attributes\": {\"$attr\": \"$new\"}}")
  check "$vendor: stale If-Match -> 412" test "$code" = 412
  code=$(ccode PATCH "$settings" -H 'Content-Type: application/json' -d "{\"Attributes\": {\"$attr\": \"$new\"}}")
  if [ "$vendor" = openbmc ]; then
    check "$vendor: PATCH without If-Match -> 428" test "$code" = 428
  else
    check "$vendor: PATCH without If-Match accepted" bash -c '[ "$1" = 200 ] || [ "$1" = 204 ]' _ "$code"
  fi

  # Firmware updates (before the reset, so staged images apply on it)
  case $vendor in
    dmtf)
      check "$vendor: SimpleUpdate (redfishtool follows the task monitor)" rft raw POST "$us/Actions/UpdateService.SimpleUpdate" -d '{"ImageURI": "http://127.0.0.1/fw/BMC-1.46.0.bin"}'
      check "$vendor: BMC version bumped on completion" wait_version "$fwc/BMC" 1.46.0
      code=$(ccode POST "$us/Actions/UpdateService.SimpleUpdate" -H 'If-Match: *' -H 'Content-Type: application/json' -d '{"ImageURI": "http://127.0.0.1/fw/BMC-1.47.0.bin"}')
      check "$vendor: If-Match on an action -> 412" test "$code" = 412
      code=$(ccode POST "$(cget "$us" | jv '.["MultipartHttpPushUri"]')" -D "$run/$name.hdr" -F 'UpdateParameters={"Targets":[]};type=application/json' -F "UpdateFile=@$run/credentials;filename=BIOS-P79 v1.50.bin;type=application/octet-stream")
      check "$vendor: multipart push -> 202 + task monitor" bash -c '[ "$1" = 202 ] && grep -qi "^location: .*TaskMonitors" "$2"' _ "$code" "$run/$name.hdr"
      monitor=$(awk 'tolower($1) == "location:" { print $2 }' "$run/$name.hdr" | tr -d '\r')
      ;;
    ilo)
      check "$vendor: SimpleUpdate answers 200 without a task" bash -c '[ "$(curl -sS -o /dev/null -w "%{http_code}" --cacert "$1" -K "$2" -H "Content-Type: application/json" -d "{\"ImageURI\": \"http://127.0.0.1/fw/iLO%205-2.80.bin\"}" "https://$3$4")" = 200 ]' _ "$ca" "$run/curl.cfg" "$HP" "$(cget "$us" | jv '.["Actions"]["#UpdateService.SimpleUpdate"]["target"]')"
      check "$vendor: redfishtool SimpleUpdate (System ROM, staged)" rft raw POST "$(cget "$us" | jv '.["Actions"]["#UpdateService.SimpleUpdate"]["target"]')" -d '{"ImageURI": "http://127.0.0.1/fw/System%20ROM-A47%20v2.60.bin", "TransferProtocol": "HTTP"}'
      check "$vendor: iLO firmware applied immediately, dated as the mockup's" wait_version "$fwc""1/" "2\.80$ILO_DATE"
      pages=$(cget "$fwc" | jv '."Members@odata.nextLink" // ""')
      check "$vendor: FirmwareInventory paged (nextLink)" test -n "$pages"
      check "$vendor: page 2 via nextLink" test "$(cget "$pages" | jv '.Members | length')" -gt 0
      check "$vendor: System ROM task done" wait_version "$fwc""1/" "2\.80$ILO_DATE"
      sleep 1
      check "$vendor: System ROM staged, not yet current" test "$(cget "$fwc""2/" | jv '.["Version"]')" = "A47 v2.58 (05/19/2022)"
      check "$vendor: case-insensitive path" test "$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$ca" -K "$run/curl.cfg" "https://$HP/REDFISH/v1/SYSTEMS/1")" = 200
      check "$vendor: /redfish/v1 redirects to /redfish/v1/" test "$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$ca" "https://$HP/redfish/v1")" = 301
      ;;
    openbmc)
      push=$(cget "$us" | jv '.["MultipartHttpPushUri"]')
      code=$(ccode POST "$push" -D "$run/$name.hdr" -F 'UpdateParameters={"Targets":[]};type=application/json' -F "UpdateFile=@$run/credentials;filename=bios_active-1.5.0.bin;type=application/octet-stream")
      check "$vendor: multipart push -> 202 + task monitor" test "$code" = 202
      monitor=$(awk 'tolower($1) == "location:" { print $2 }' "$run/$name.hdr" | tr -d '\r')
      check "$vendor: task monitor answers 202 while running" test "$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$ca" -K "$run/curl.cfg" "https://$HP$monitor")" = 202
      check "$vendor: raw GET of the task (redfishtool)" rft raw GET "$(cget "$monitor" | jv '.["@odata.id"]')"
      check "$vendor: task Completed" eventually is "$monitor" .TaskState Completed
      check "$vendor: BIOS image staged, version unchanged" test "$(cget "$fwc/bios_active" | jv '.["Version"]')" = 1.4.0
      check "$vendor: \$expand refused (not advertised)" test "$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$ca" -K "$run/curl.cfg" "https://$HP$fwc?\$expand=.")" = 400
      ;;
  esac

  # Reset: validated type, power transitions, pending -> current
  code=$(ccode POST "$(cget "$sys" | jv '.["Actions"]["#ComputerSystem.Reset"]["target"]')" -H 'Content-Type: application/json' -d "{\"ResetType\": \"$badreset\"}")
  check "$vendor: ResetType $badreset not allowed -> 400" bash -c '[ "$1" = 400 ] && grep -q ActionParameterValueNotInList "$2"' _ "$code" "$run/$name.body"
  se1=$(etag_of "$sys")
  check "$vendor: reset $reset" rft Systems -1 reset $reset
  check "$vendor: PowerState back to On" wait_power "$sys" On
  check "$vendor: system ETag changed ($se1 -> $(etag_of "$sys"))" test "$se1" != "$(etag_of "$sys")"
  check "$vendor: BIOS current now $attr=$new" test "$(cget "$bios" | jv ".Attributes[\"$attr\"]")" = "$new"
  check "$vendor: nothing pending after reset" test "$(cget "$settings" | jv -S .Attributes)" = "$(cget "$bios" | jv -S .Attributes)"
  check "$vendor: @Redfish.Settings.Messages filled" test "$(cget "$bios" | jv '."@Redfish.Settings".Messages | length')" -gt 0
  case $vendor in
    ilo) check "$vendor: staged System ROM applied on reset, dated as the mockup's" wait_version "$fwc""2/" "A47 v2\.60$ROM_DATE" ;;
    openbmc) check "$vendor: staged BIOS image applied on reset" test "$(cget "$fwc/bios_active" | jv '.["Version"]')" = 1.5.0 ;;
    dmtf)
      check "$vendor: BIOS image applied on completion" eventually is "$fwc/BIOS" .Version "P79 v1.50"
      check "$vendor: task monitor deleted after completion (404)" eventually code_is "$monitor" 404
      check "$vendor: task still readable in TaskService" test "$(cget "$(cget /redfish/v1/TaskService/Tasks | jv '.["Members"][-1]["@odata.id"]')" | jv '.["TaskState"]')" = Completed
      ;;
  esac
  check "$vendor: no session left" test "$(sessions $name)" = 0
}

# The three vendor modes run side by side (each has its own BMC); results are merged below.
for name in n1 n2 n3; do vendor_checks $name >"$run/result.$name" 2>&1 & done
wait
for name in n1 n2 n3; do
  cat "$run/result.$name"
  pass=$((pass + $(grep -c '^ok ' "$run/result.$name")))
  fail=$((fail + $(grep -c '^FAIL ' "$run/result.$name")))
done

refused() { curl -sS -o /dev/null --cacert "$ca" "https://$(hostport "$1")/redfish/v1/" 2>/dev/null; [ $? = 60 ]; }
check "wrong-CA BMC refused by a verifying client (curl exit 60)" refused n4
check "BMC whose certificate names another address refused (curl exit 60)" refused n5
check "self-signed BMC refused (curl exit 60)" refused n6
check "the same BMCs answer when verification is off (the refusal is about trust only)" \
  curl -sS -o /dev/null --insecure "https://$(hostport n5)/redfish/v1/"
check "password never in the emulator's logs" bash -c '! grep -rqF -- "$1" "$2/emulator.log" "$2/requests.log"' _ "$password" "$run"
check "request log records auth kinds" bash -c 'grep -q "auth=session" "$1" && grep -q "auth=basic" "$1"' _ "$run/requests.log"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
