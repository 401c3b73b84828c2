#!/bin/bash
# firmware, bios and power modules end to end against the emulator, per vendor mode:
# gather -> diff (plan) -> apply -> reset -> verify (plan is empty). Also: SimpleUpdate and
# multipart push with task following, "staged, applies on reset" reported honestly, an
# identical pending BIOS change not re-staged, a registry violation refused, power on/off.
source "$PLUMB_SRC/tests/integration/lib/redfish.sh"
rf_up --count 3 --vendor mixed   # n1 dmtf, n2 ilo, n3 openbmc
W=$RF_WORK
echo "image" >"$W/BMC-1.46.0.bin"
cat >"$W/n1.json" <<JSON
{"firmware": {"BMC": "1.46.0", "BIOS": "P79 v1.46"},
 "firmware_images": {"BMC": "file:$W/BMC-1.46.0.bin", "BIOS": "https://fw.example/BIOS-P79%20v1.46.bin"},
 "bios": {"SriovGlobalEnable": "Enabled", "WorkloadProfile": "HPC"}}
JSON
cat >"$W/n2.json" <<'JSON'
{"firmware": {"System ROM": "A47 v2.60"},
 "firmware_images": {"System ROM": "https://fw.example/System%20ROM-A47%20v2.60.bin"},
 "bios": {"WorkloadProfile": "HighPerformanceCompute(HPC)"}}
JSON
echo '{"bios": {"SriovGlobalEnable": "Enabled"}}' >"$W/n3.json"

for node in n1 n2 n3; do
  pb plan --node "$node" --desired "$W/$node.json"
  check "$node: plan shows changes (rc=$rc, want 2)" [ "$rc" = 2 ]
done
check "n1: firmware ordered BMC before BIOS" bash -c "grep -n 'flash' '$OUT' >/dev/null; grep -o 'flash [A-Z]*' '$RF_OUT/1.out' | tr '\n' ' ' | grep -q '^flash BMC flash BIOS'"

pb apply --node n1 --desired "$W/n1.json"
check "n1 (dmtf): apply succeeds (rc=$rc)" [ "$rc" = 0 ]
check "  BMC pushed multipart, task followed, version verified" has "updated via multipart to 1.46.0" "$OUT"
check "  BIOS firmware via SimpleUpdate" has "updated via SimpleUpdate to P79 v1.46" "$OUT"
check "  BIOS attributes staged" has "staged 2 attribute(s), applies on reset" "$OUT"
pb apply --node n2 --desired "$W/n2.json"
check "n2 (ilo): apply succeeds (rc=$rc)" [ "$rc" = 0 ]
check "  System ROM reported staged (applies on reset), not updated" has "staged via SimpleUpdate, applies on reset" "$OUT"
pb apply --node n3 --desired "$W/n3.json"
check "n3 (openbmc): apply succeeds (rc=$rc)" [ "$rc" = 0 ]

# Pending but not yet applied: the plan still shows it, says so, and apply does not re-stage.
pb plan --node n1 --desired "$W/n1.json"
check "n1: after apply, BIOS still differs until reset (rc=$rc)" [ "$rc" = 2 ]
check "  and the plan says it is already pending" has "already pending, applies on reset" "$OUT"
rf_sync
before=$(grep -c ' n1 PATCH ' "$RF_RUN/requests.log" || true)
pb apply --node n1 --desired "$W/n1.json"
rf_sync
after=$(grep -c ' n1 PATCH ' "$RF_RUN/requests.log" || true)
check "  a second apply does not PATCH again ($before -> $after PATCHes)" [ "$before" = "$after" ]

for node in n1 n2 n3; do
  pb reset "$node"
  check "$node: reset through the BMC (rc=$rc): $(cat "$OUT")" [ "$rc" = 0 ]
done
check "ResetType from ActionInfo on OpenBMC" grep -q ' n3 GET /redfish/v1/Systems/system/ResetActionInfo 200' "$RF_RUN/requests.log"
for node in n1 n2 n3; do
  pb plan --node "$node" --desired "$W/$node.json"
  check "$node: after reset the plan is empty (verify; rc=$rc)" [ "$rc" = 0 ]
done

echo '{"bios": {"WorkloadProfile": "NoSuchProfile"}}' >"$W/bad.json"
pb apply --node n2 --desired "$W/bad.json"
check "registry violation refused (rc=$rc)" [ "$rc" = 1 ]
check "  naming the registry and the allowed values" has "rejected by BiosAttributeRegistryA47" "$ERR"

echo '{"power": "Off"}' >"$W/off.json"
echo '{"power": "On"}' >"$W/on.json"
pb apply --node n3 --desired "$W/off.json"
pb inventory --node n3 --format json
check "power Off applied" json_py 'assert d["nodes"][0]["facts"]["power"]["power_state"] == "Off"'
pb plan --node n3 --desired "$W/on.json"
check "power On planned for an Off node (rc=$rc)" [ "$rc" = 2 ]
pb apply --node n3 --desired "$W/on.json"
pb plan --node n3 --desired "$W/on.json"
check "power On applied and verified (rc=$rc)" [ "$rc" = 0 ]

check "no session left behind (live: $(rf_sessions))" [ "$(rf_sessions)" = 0 ]
rf_finish
