#!/usr/bin/env bash
# plan / drift --facts and BMC facts (issue 32): a snapshot that never read a node's BMC does not
# make its firmware pins "in sync" (it did: exit 0 over keys nothing read); the BMC facts a
# gather records are judged like live ones, a pin of the version alone matching iLO's dated
# Version. No testbed: bench/plan/gen.py's synthetic snapshot of one node, given a BMC.
set -uo pipefail
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
P() { "$PLUMB" "$@"; }
python3 "$PLUMB_SRC/bench/plan/gen.py" --template "$PLUMB_SRC/bench/plan/template-facts.json" \
  --nodes 1 --no-upgrade --drift-every 0 --out "$E2E_TMP/g" >/dev/null
R=$E2E_TMP/g/repo F=$E2E_TMP/g/facts.json
# gpu00001 has a BMC; the stack pins its iLO version (the version alone, as an operator writes it).
sed -i 's|{ name: gpu00001, address: gpu00001.bench.example,|{ name: gpu00001, address: gpu00001.bench.example, bmc: "https://gpu00001-bmc.bench.example",|' "$R/inventory.yaml"
python3 - "$R/stacks/bench.yaml" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["firmware"] = {"iLO 5": "2.70"}
json.dump(s, open(sys.argv[1], "w"), indent=1)
PY
git -C "$R" commit -qam "gpu00001 has a BMC; pin its iLO"
grep -q 'bmc: "https://gpu00001-bmc' "$R/inventory.yaml" && pass "inventory names gpu00001's BMC" || fail "inventory edit"

# 1. The snapshot has no BMC facts (gathered with --no-bmc, or by an older plumb).
expect_rc 1 "drift --facts, BMC never read: no verdict (1), never in sync" -- P drift --repo "$R" --facts "$F"
expect_grep 'gpu00001' "$E2E_OUT" "drift names the node"
expect_grep 'facts.bmc-unread' "$E2E_OUT" "drift says why: the snapshot has no BMC facts"
expect_rc 1 "plan --facts --detailed-exitcode, BMC never read: 1" -- P plan --repo "$R" --facts "$F" --no-scheduler --detailed-exitcode
expect_grep 'PLAN INCOMPLETE' "$E2E_OUT" "plan says incomplete"
expect_rc 0 "drift --facts --no-bmc: the firmware key is not checked, by request (0)" -- P drift --repo "$R" --facts "$F" --no-bmc
cat "$E2E_OUT" "$E2E_ERR" >"$E2E_TMP/both"
expect_grep 'not checked' "$E2E_TMP/both" "and says the key was not checked"

# 2. The snapshot records gpu00001's BMC facts, as `plumb gather` now does.
with_bmc() { # VERSION OUT: the snapshot with gpu00001's firmware/bios/power facts
  python3 - "$F" "$1" "$2" <<'PY'
import json, sys
snap = json.load(open(sys.argv[1]))
n = snap["nodes"]["gpu00001"]
n["facts"]["firmware"] = {
    "components": [{"id": "1", "name": "iLO 5", "software_id": "", "version": sys.argv[2],
                    "updateable": True, "link": "/redfish/v1/UpdateService/FirmwareInventory/1/",
                    "collection": "FirmwareInventory", "scope": None, "short_id": None}],
    "update_service": {"simple_update": None, "simple_update_info": None, "multipart_push": None,
                       "protocols": []}}
n.setdefault("errors", {})["bios"] = {"severity": "error", "code": "bmc.http.404", "message": "no Bios"}
n["errors"]["power"] = {"severity": "error", "code": "bmc.http.404", "message": "no system"}
json.dump(snap, open(sys.argv[3], "w"))
PY
}
with_bmc "2.70 May 16 2022" "$E2E_TMP/bmc.json"
expect_rc 0 "drift --facts with the BMC's facts: the pin 2.70 matches iLO's '2.70 May 16 2022' (0)" -- \
  P drift --repo "$R" --facts "$E2E_TMP/bmc.json"
with_bmc "2.60 Mar 01 2022" "$E2E_TMP/old.json"
expect_rc 2 "drift --facts, the BMC runs 2.60: drift (2)" -- P drift --repo "$R" --facts "$E2E_TMP/old.json"
expect_grep 'firmware.iLO 5' "$E2E_OUT" "the drifted key is named"
finish
