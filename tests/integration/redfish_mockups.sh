#!/bin/bash
# plumb bmc against every shared vendor mockup (../shared/redfish-mockups), each served as it is
# by the emulator's vendor-neutral mode: inventory, plan, apply (firmware and BIOS), reset, and
# the plan is empty afterwards. Per vendor, what it takes:
#   public-rackmount1 (DMTF)   SimpleUpdate whose ActionInfo lists no Targets; Bios/Settings
#   XL675d_A100 (HPE iLO 5)    lower-case trailing-slash links; the A47 attribute registry
#   OpenBMC-stock (bmcweb)     multipart push, ResetActionInfo, a system that starts Off, a Bios
#                              with no attributes (a pin is refused, clearly)
#   EX235n (HPE Cray EX)       one BMC, two nodes (Systems/Node0, Node1) named with system= in
#                              a targets file and with bmc_system in a cluster repo;
#                              object-valued BIOS attributes written to the Bios itself;
#                              firmware scoped per node; ResetType from ActionInfo (its
#                              graceful Off, then On)
#   Gigabyte (AMI MegaRAC)     SimpleUpdate parameters only in ActionInfo (TransferProtocol
#                              HTTP/FTP, UpdateComponent, no Targets); a PATCH-only Bios/SD;
#                              @Redfish.Settings.Messages kept; a task that says UpdateSuccessful
#                              while the inventory lags; two BMCs of one mockup stay apart
# Also Debian's redfishtool against each mockup (the emulator stays honest).
RF_MOCKUPS="public-rackmount1 XL675d_A100 OpenBMC-stock EX235n Gigabyte"
source "$PLUMB_SRC/tests/integration/lib/redfish.sh"
rf_up --count 6 --vendor-of n1=neutral:public-rackmount1 --vendor-of n2=neutral:XL675d_A100 \
  --vendor-of n3=neutral:OpenBMC-stock --vendor-of n4=neutral:EX235n --vendor-of n5=neutral:Gigabyte \
  --vendor-of n6=neutral:Gigabyte --option-of n6:inventory_lag=600
W=$RF_WORK
url() { awk -v n="$1" '$1 == n {print $2}' "$RF_RUN/bmcs.txt"; }
T=$W/targets
cat >"$T" <<EOF
rack  $(url n1)
ilo   $(url n2)
obmc  $(url n3)
cray0 $(url n4) system=Node0
cray1 $(url n4) system=Node1
giga  $(url n5)
giga2 $(url n6)
EOF
pbt() { # plumb bmc SUB over the targets above (sets rc, OUT, ERR)
  n=$((n + 1))
  local sub=$1; shift
  OUT=$RF_OUT/$n.out ERR=$RF_OUT/$n.err
  local cmd=("$PLUMB" bmc "$sub")
  [[ $sub != apply && $sub != reset ]] || cmd=("$PLUMB_BMC_MODULE_APPLY" "$sub")   # the modules' Apply (lib/redfish.sh)
  set +e
  "${cmd[@]}" --targets "$T" --ca "$RF_RUN/certs/ca.pem" --credentials "file:$RF_RUN/credentials" \
    -v "$@" >"$OUT" 2>"$ERR"
  rc=$?
  set -e
}
count() { grep -c -- "$1" "$2" || true; }
state() { rf_state "$1" | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"; }

echo "image" >"$W/5d0869c4-2.16.0.bin"
cat >"$W/rack.json" <<'JSON'
{"firmware": {"BMC": "1.46.0"}, "firmware_images": {"BMC": "https://fw.example/BMC-1.46.0.bin"},
 "bios": {"ProcHyperthreading": "Disabled"}}
JSON
cat >"$W/ilo.json" <<'JSON'
{"firmware": {"System ROM": "A47 v2.60"},
 "firmware_images": {"System ROM": "https://fw.example/System%20ROM-A47%20v2.60.bin"},
 "bios": {"WorkloadProfile": "GeneralPowerEfficientCompute"}}
JSON
cat >"$W/obmc.json" <<JSON
{"firmware": {"5d0869c4": "2.16.0"}, "firmware_images": {"5d0869c4": "file:$W/5d0869c4-2.16.0.bin"},
 "power": "On"}
JSON
cat >"$W/cray.json" <<'JSON'
{"firmware": {"BIOS": "ex235n.bios-1.2.2"},
 "firmware_images": {"BIOS": "https://fw.example/BIOS-ex235n.bios-1.2.2.bin"},
 "bios": {"Core Performance Boost": "Disabled"}}
JSON
cat >"$W/giga.json" <<'JSON'
{"firmware": {"BMC": "12.85.0"}, "firmware_images": {"BMC": "http://fw.example/BMC-12.85.0.bin"},
 "bios": {"GBT0001": "Disabled"}}
JSON

# ---- inventory of every mockup ----------------------------------------------------------
pbt inventory --node rack --node ilo --node obmc --node cray0 --node cray1 --node giga --format json
check "inventory of all five mockups (rc=$rc)" [ "$rc" = 0 ]
check "  each: firmware, power, and a BIOS (OpenBMC-stock's lists no attributes)" json_py '
n = {x["node"]: x["facts"] for x in d["nodes"]}
assert all(len(f["firmware"]["components"]) >= 1 for f in n.values()), n
assert all(f["power"]["power_state"] in ("On", "Off") for f in n.values())
assert all(len(f["bios"]["attributes"]) >= 10 for k, f in n.items() if k != "obmc")
assert n["obmc"]["bios"]["attributes"] == {} and n["obmc"]["power"]["power_state"] == "Off"'
check "  Cray: each node its own system, object-valued attributes read as values" json_py '
n = {x["node"]: x["facts"] for x in d["nodes"]}
assert n["cray0"]["power"]["system"] == "/redfish/v1/Systems/Node0"
assert n["cray1"]["power"]["system"] == "/redfish/v1/Systems/Node1"
assert n["cray1"]["bios"]["attributes"]["Core Performance Boost"] == "Enabled"
assert n["cray1"]["bios"]["write"] == "in-place"'
check "  Cray: firmware scoped per node (own + shared, never the other node's)" json_py '
n = {x["node"]: x["facts"] for x in d["nodes"]}
ids = lambda k: {c["id"] for c in n[k]["firmware"]["components"]}
assert "Node1.BIOS" in ids("cray1") and not any(i.startswith("Node0.") for i in ids("cray1")), ids("cray1")
assert "Node0.BIOS" in ids("cray0") and not any(i.startswith("Node1.") for i in ids("cray0"))
assert "BMC" in ids("cray0") and "BMC" in ids("cray1")
assert len(ids("cray1")) == 19, len(ids("cray1"))   # 11 of its own + 8 shared'
check "  Gigabyte: PATCH-only Bios/SD found, the mockup's SettingsFailed message kept" json_py '
g = [x for x in d["nodes"] if x["node"] == "giga"][0]["facts"]["bios"]
assert g["settings"] == "/redfish/v1/Systems/Self/Bios/SD" and g["write"] == "patch-only", g
assert g["last_apply"] == ["Base.1.0.SettingsFailed"], g["last_apply"]'

# ---- plan, apply, reset, plan: each vendor ---------------------------------------------
for node in rack ilo obmc cray1 giga; do
  desired=$W/${node%1}.json
  pbt plan --node "$node" --desired "$desired"
  check "$node: plan shows the changes (rc=$rc, want 2)" [ "$rc" = 2 ]
done
pbt apply --node rack --desired "$W/rack.json"
check "rack (DMTF): apply succeeds (rc=$rc)" [ "$rc" = 0 ]
check "  firmware via SimpleUpdate, task followed, verified" has "updated via SimpleUpdate to 1.46.0" "$OUT"
check "  BIOS staged in Bios/Settings" has "staged 1 attribute(s), applies on reset" "$OUT"
rf_sync
check "  no Targets sent: its SimpleUpdate ActionInfo lists none (the BMC would answer 400)" \
  grep -q ' n1 POST /redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate 202' "$RF_RUN/requests.log"

pbt apply --node ilo --desired "$W/ilo.json"
check "ilo (HPE iLO 5): apply succeeds (rc=$rc)" [ "$rc" = 0 ]
check "  System ROM via SimpleUpdate with Targets" has "updated via SimpleUpdate to A47 v2.60" "$OUT"
check "  the inventory reports it with its build date, as the mockup's (the pin matched it)" \
  bash -c 'grep -qE "^A47 v2\.60 \([0-9]{2}/[0-9]{2}/[0-9]{4}\)$" <<<"$1"' _ "$(state n2 'd["firmware"]["System ROM [2]"]["version"]')"
check "  BIOS checked against the A47 registry and staged" has "staged 1 attribute(s)" "$OUT"

pbt apply --node obmc --desired "$W/obmc.json"
check "obmc (OpenBMC): apply succeeds (rc=$rc)" [ "$rc" = 0 ]
check "  firmware pushed multipart" has "updated via multipart to 2.16.0" "$OUT"
check "  its system, Off in the mockup, powered On" has "obmc: power On (is Off)" "$OUT"
echo '{"bios": {"ProcTurboMode": "Disabled"}}' >"$W/obmc-bios.json"
pbt apply --node obmc --desired "$W/obmc-bios.json"
check "obmc: a BIOS pin on a Bios that lists no attributes is refused (rc=$rc)" [ "$rc" = 1 ]
check "  saying so" has "ProcTurboMode: not an attribute of this BIOS" "$ERR"
check "  with a hint" has "this BIOS lists no attributes" "$ERR"

pbt apply --node cray1 --desired "$W/cray.json"
check "cray1 (HPE Cray EX, Node1): apply succeeds (rc=$rc)" [ "$rc" = 0 ]
check "  its own BIOS firmware (Node1.BIOS, pinned as BIOS)" has "updated via SimpleUpdate to ex235n.bios-1.2.2" "$OUT"
check "  BIOS written to its own Bios (no settings object)" has "written to /redfish/v1/Systems/Node1/Bios" "$OUT"
rf_sync
check "  only Node1's Bios was PATCHed" bash -c "grep -q ' n4 PATCH /redfish/v1/Systems/Node1/Bios 204' '$RF_RUN/requests.log' && ! grep -q ' n4 PATCH /redfish/v1/Systems/Node0' '$RF_RUN/requests.log'"

pbt apply --node giga --desired "$W/giga.json"
check "giga (AMI MegaRAC): apply succeeds (rc=$rc)" [ "$rc" = 0 ]
check "  firmware over HTTP, as its ActionInfo allows" has "updated via SimpleUpdate to 12.85.0" "$OUT"
check "  BIOS PATCHed to the PATCH-only Bios/SD" has "/redfish/v1/Systems/Self/Bios/SD takes PATCH only" "$OUT"
rf_sync
check "  Bios/SD: GET 405, PATCH 204" bash -c "grep -q ' n5 GET /redfish/v1/Systems/Self/Bios/SD 405' '$RF_RUN/requests.log' && grep -q ' n5 PATCH /redfish/v1/Systems/Self/Bios/SD 204' '$RF_RUN/requests.log'"
echo '{"firmware": {"BMC": "12.86.0"}, "firmware_images": {"BMC": "https://fw.example/BMC-12.86.0.bin"}}' >"$W/giga-https.json"
before=$(count ' n5 POST /redfish/v1/UpdateService/Actions/SimpleUpdate' "$RF_RUN/requests.log")
pbt apply --node giga --desired "$W/giga-https.json"
rf_sync
check "giga: an https image is refused before anything is sent (rc=$rc)" [ "$rc" = 1 ]
check "  naming what the BMC takes" has "the BMC takes TransferProtocol HTTP, FTP (its ActionInfo)" "$ERR"
check "  no SimpleUpdate POSTed" [ "$(count ' n5 POST /redfish/v1/UpdateService/Actions/SimpleUpdate' "$RF_RUN/requests.log")" = "$before" ]

for node in rack ilo obmc cray1 giga; do
  pbt reset "$node"
  check "$node: reset through the BMC (rc=$rc): $(cat "$OUT")" [ "$rc" = 0 ]
  cp "$OUT" "$W/reset-$node.out"
done
check "cray1: reset with what Node1's ActionInfo offers, graceful first (Off, then On; not ForceOff)" has "sent Off+On" "$W/reset-cray1.out"
for node in rack ilo obmc cray1 giga; do
  desired=$W/${node%1}.json
  pbt plan --node "$node" --desired "$desired"
  check "$node: after apply and reset the plan is empty (rc=$rc): $(tail -1 "$OUT")" [ "$rc" = 0 ]
done
check "rack: the mockup's own pending BIOS values applied on the reset too" \
  test "$(state n1 'd["bios"]["current"]["EmbeddedSata"]')" = Ahci

# ---- one BMC, two nodes; two BMCs, one mockup --------------------------------------------
pbt plan --node cray0 --desired "$W/cray.json"
check "cray0 (Node0) untouched by Node1's apply and reset: its plan still has both changes (rc=$rc)" [ "$rc" = 2 ]
check "  its firmware" has "flash BIOS ex235n.bios-1.2.2 (have ex235n.bios-1.2.1)" "$OUT"
check "  its BIOS" has 'set BIOS Core Performance Boost="Disabled" (have "Enabled")' "$OUT"
check "  Node0 never reset, Node1 once" test "$(state n4 '[d["systems"]["Node0"]["boots"], d["systems"]["Node1"]["boots"]]')" = "[0, 1]"

pbt apply --node giga2 --desired "$W/giga.json"
check "giga2: apply succeeds (rc=$rc)" [ "$rc" = 0 ]
check "  the task said UpdateSuccessful while the inventory lags: updated, not 'staged'" \
  has "updated via SimpleUpdate to 12.85.0 (the task says UpdateSuccessful; the inventory still shows 12.84.13" "$OUT"
check "  not reported as staged" bash -c "! grep -q 'staged via' '$OUT'"
check "giga and giga2 share a mockup, not state: giga2's BIOS still Enabled after giga's reset" \
  test "$(state n6 'd["bios"]["current"]["GBT0001"]')" = Enabled
check "  and giga's is Disabled" test "$(state n5 'd["bios"]["current"]["GBT0001"]')" = Disabled

# A node on the blade that names no system: said once, with the systems there are; the plan
# does not say "in sync" over what it could not read.
printf 'crayx %s\n' "$(url n4)" >"$W/unnamed"
T_SAVE=$T; T=$W/unnamed
pbt inventory
check "unnamed node on a two-system BMC: inventory exit 3 (rc=$rc)" [ "$rc" = 3 ]
check "  names the node and lists the systems" has "node crayx: $(url n4) manages 2 systems (Node0, Node1)" "$OUT"
check "  said once, not once per module" [ "$(count 'manages 2 systems' "$OUT")" = 1 ]
pbt plan --desired "$W/cray.json"
check "  bmc plan: exit 3 (rc=$rc)" [ "$rc" = 3 ]
check "  and not 'in sync'" bash -c "! grep -q 'in sync' '$OUT'"
check "  but what it could not read" has "not read: crayx (firmware, bios)" "$OUT"
check "  the error once" [ "$(count 'manages 2 systems' "$ERR")" = 1 ]
T=$T_SAVE

# The same blade from a cluster repo: bmc_system in inventory.yaml, schema-checked.
repo=$W/repo
mkdir -p "$repo/stacks" "$repo/rollouts"
cp "$PLUMB_SRC/examples/minimal/rollouts/"* "$repo/rollouts/"
cat >"$repo/inventory.yaml" <<EOF
cluster: blade
defaults:
  ssh: { user: root, known_hosts: known_hosts }
  bmc: { ca: $RF_RUN/certs/ca.pem, credentials: "file:$RF_RUN/credentials" }
nodes:
  - { name: x0n0, address: x0n0.rf.example, bmc: "$(url n4)", bmc_system: Node0, groups: [gpu] }
  - { name: x0n1, address: x0n1.rf.example, bmc: "$(url n4)", bmc_system: Node1, groups: [gpu] }
groups:
  gpu: { stack: base, rollout: one-at-a-time }
EOF
printf 'firmware: { BIOS: ex235n.bios-1.2.2 }\nbios: { Core Performance Boost: Disabled }\n' >"$repo/stacks/base.yaml"
git -C "$repo" init -q && git -C "$repo" add -A &&
  git -C "$repo" -c user.email=t@t.example -c user.name=t commit -qm init
n=$((n + 1)); OUT=$RF_OUT/$n.out; ERR=$RF_OUT/$n.err
"$PLUMB" bmc plan --repo "$repo" >"$OUT" 2>"$ERR" && rc=0 || rc=$?
check "repo with bmc_system: plan reads each node's own system (rc=$rc, want 2)" [ "$rc" = 2 ]
check "  Node0's BIOS firmware still to flash" has "x0n0: flash BIOS ex235n.bios-1.2.2 (have ex235n.bios-1.2.1)" "$OUT"
check "  and its BIOS attribute (a Cray name with spaces, pinned in a stack)" \
  has 'x0n0: set BIOS Core Performance Boost="Disabled" (have "Enabled")' "$OUT"
check "  Node1's already flashed and set" bash -c "! grep -q '^x0n1:' '$OUT'"
sed -i '/x0n1/s/, bmc_system: Node1//' "$repo/inventory.yaml"
n=$((n + 1)); OUT=$RF_OUT/$n.out; ERR=$RF_OUT/$n.err
"$PLUMB" validate --repo "$repo" --working-tree >"$OUT" 2>"$ERR" && rc=0 || rc=$?
check "repo: a node sharing the BMC without bmc_system is refused by validate (rc=$rc)" [ "$rc" = 1 ]
check "  saying which node and what to add" bash -c "cat '$OUT' '$ERR' | grep -qF \"is shared with node 'x0n0' (line 6), and node 'x0n1' names no bmc_system\""

# ---- redfishtool, a third-party client, against each mockup as served -------------------
if command -v redfishtool >/dev/null; then
  # Credentials through a 0600 file, never on a command line.
  ( umask 077; IFS=: read -r user password <"$RF_RUN/credentials"
    printf '{"user": "%s", "password": "%s"}\n' "$user" "$password" >"$W/rft.json" )
  rt() { redfishtool -r "${1#https://}" -c "$W/rft.json" -S Always -T 10 "${@:2}" >"$W/rt.out" 2>&1; }
  for b in n1 n2 n3 n4 n5; do
    check "redfishtool $b ($(awk -v n=$b '$1 == n {print $3}' "$RF_RUN/bmcs.txt")): Systems list" rt "$(url $b)" Systems list
    check "redfishtool $b: raw GET of the firmware inventory" rt "$(url $b)" raw GET /redfish/v1/UpdateService/FirmwareInventory
    check "redfishtool $b: session login and logout" rt "$(url $b)" -A Session Systems list
  done
else
  echo "SKIP: redfishtool not installed (its checks only)"
fi

check "no session left behind (live: $(rf_sessions))" [ "$(rf_sessions)" = 0 ]
rf_finish
