#!/usr/bin/env bash
# plumb gather reads the BMCs the inventory names (issue 32), in the same run as the nodes, into
# the same snapshot: firmware, BIOS and power facts per node, with the in-band facts digest.
# Then plan/drift --facts judge the BMC pins on that snapshot (the iLO pin "2.70" matches the
# Version "2.70 May 16 2022"), and on one gathered with --no-bmc they say unread (exit 1), never
# in sync. Two testbed nodes, each with an iLO-mode BMC linked to it (`bmc up --tb`).
. "$(dirname "$0")/lib/gather.sh"
RF_BMC=$PLUMB_SRC/tests/testbed/redfish/bmc
"$RF_BMC" mockups >/dev/null || exit 77   # the vendor modes' mockups (third-party data)
gt_up 2
"$RF_BMC" up --tb --vendor ilo >/dev/null
rf=$TB_RUN/redfish
IFS=: read -r _user password <"$rf/credentials"
printf 'firmware: { "iLO 5": "2.70" }\n' >"$GT_TMP/fw.yaml"
rm -rf "$REPO"
"$TB" cluster-repo "$REPO" --stack "$GT_TMP/fw.yaml" \
  --rollout "$PLUMB_SRC/tests/integration/data/plan/rolling.yaml" >/dev/null
python3 - "$REPO/inventory.yaml" "$rf/bmcs.txt" "$rf/certs/ca.pem" "$rf/credentials" <<'PY'
import sys
inv, bmcs, ca, cred = sys.argv[1:]
urls = dict((l.split()[0], l.split()[1]) for l in open(bmcs) if l.strip())
out = []
for line in open(inv):
    if line.startswith("  ssh: {"):
        out.append("  bmc: { ca: %s, credentials: \"file:%s\" }\n" % (ca, cred))
    for name, url in urls.items():
        if line.startswith("  - { name: %s," % name):
            line = line.replace("{ name: %s," % name, "{ name: %s, bmc: \"%s\"," % (name, url))
    out.append(line)
open(inv, "w").writelines(out)
PY
gt_commit "BMCs for the nodes"
check "the inventory names both BMCs" test "$(grep -c 'bmc: "https://127.11' "$REPO/inventory.yaml")" = 2

gather --format json --facts-out "$GT_TMP/facts.json"
check "gather reads nodes and BMCs: exit 0 (rc=$RC)" test "$RC" = 0
[[ $RC == 0 ]] || head -c 2000 "$ERR"
check "every node has firmware, bios and power facts from its BMC" \
  py 'all(all(m in n["facts"] for m in ("firmware", "bios", "power")) for n in j["nodes"].values())'
check "the iLO's own version form is recorded (2.70 May 16 2022)" \
  py 'any(c["name"] == "iLO 5" and c["version"] == "2.70 May 16 2022" for c in j["nodes"]["n1"]["facts"]["firmware"]["components"])'
check "power as the BMC says (On)" py 'j["nodes"]["n2"]["facts"]["power"]["power_state"] == "On"'
check "the in-band facts are there too" py 'all("kernel" in n["facts"] for n in j["nodes"].values())'
check "the --facts-out file is the same snapshot" \
  python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); assert a["nodes"].keys()==b["nodes"].keys() and all("firmware" in n["facts"] for n in b["nodes"].values())' "$OUT" "$GT_TMP/facts.json"
check "one BMC session each, all logged out" bash -c '[ "$("$1" sessions n1)$("$1" sessions n2)" = "00" ]' _ "$RF_BMC"
check "the BMC password is in no output" bash -c '! grep -qF -- "$1" "$2" "$3" "$4"' _ "$password" "$OUT" "$ERR" "$GT_TMP/facts.json"

drift_facts() { # FILE ARGS...: plumb drift --facts FILE; rc -> $RC
  set +e
  "$PLUMB" drift --repo "$REPO" --facts "$@" >"$GT_TMP/drift.out" 2>&1
  RC=$?
  set -e
}
drift_facts "$GT_TMP/facts.json"
check "drift --facts on that snapshot: the pin 2.70 is in sync with '2.70 May 16 2022' (rc=$RC)" test "$RC" = 0
[[ $RC == 0 ]] || head -40 "$GT_TMP/drift.out"

gather --format json --facts-out "$GT_TMP/nobmc.json" --no-bmc
check "gather --no-bmc: exit 0, no BMC facts" py 'all("firmware" not in n["facts"] for n in j["nodes"].values())'
drift_facts "$GT_TMP/nobmc.json"
check "drift --facts on a snapshot without BMC facts: unread, no verdict (rc=$RC, was 0: in sync)" test "$RC" = 1
check "  it says the snapshot never read the BMC" grep -q 'facts.bmc-unread' "$GT_TMP/drift.out"
gt_finish
