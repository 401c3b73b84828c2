#!/bin/bash
# Redfish client against the emulator's three vendor modes (DMTF rackmount, HPE iLO, OpenBMC)
# over HTTPS: inventory, pagination, links used verbatim, $expand only where advertised,
# session login without Authorization and logout, Basic auth.
source "$PLUMB_SRC/tests/integration/lib/redfish.sh"
rf_up --count 3 --vendor mixed   # n1 dmtf, n2 ilo, n3 openbmc

pb inventory --format json
rf_sync
check "inventory of dmtf/ilo/openbmc succeeds (rc=$rc)" [ "$rc" = 0 ]
check "every vendor: firmware, bios and power facts" json_py '
n = {x["node"]: x["facts"] for x in d["nodes"]}
assert all(len(f["firmware"]["components"]) >= 2 for f in n.values())
assert all(f["power"]["power_state"] == "On" for f in n.values())
assert all(len(f["bios"]["attributes"]) >= 10 for f in n.values())'
check "iLO: all 27 FirmwareInventory members across pages (nextLink followed)" \
  json_py 'assert len([x for x in d["nodes"] if x["node"]=="n2"][0]["facts"]["firmware"]["components"]) == 27'
check "iLO: lower-case trailing-slash links used verbatim" grep -q ' n2 GET /redfish/v1/systems/1/bios/settings/ 200' "$RF_RUN/requests.log"
check "iLO: a paged nextLink was requested" grep -q ' n2 GET /redfish/v1/UpdateService/FirmwareInventory/?.*skip=10 200' "$RF_RUN/requests.log"
check "OpenBMC (no expand advertised): no \$expand sent" bash -c "! grep -q ' n3 GET .*expand' '$RF_RUN/requests.log'"
check "DMTF (expand advertised): \$expand used" grep -q ' n1 GET .*\$expand' "$RF_RUN/requests.log"
check "session logins carry no Authorization" bash -c "grep ' POST /redfish/v1/SessionService/Sessions' '$RF_RUN/requests.log' | grep -v -q 'auth=none' && exit 1 || exit 0"
check "reads use the session token" grep -q ' n3 GET /redfish/v1/Systems/system 200 auth=session' "$RF_RUN/requests.log"
check "every session logged out (live sessions: $(rf_sessions))" [ "$(rf_sessions)" = 0 ]

: >"$RF_RUN/requests.log"
pb inventory --auth basic --node n1
rf_sync
check "Basic auth works (rc=$rc)" [ "$rc" = 0 ]
check "Basic auth: no session created" bash -c "! grep -q 'POST /redfish/v1/SessionService/Sessions' '$RF_RUN/requests.log'"
check "Basic auth: requests authenticated with Basic" grep -q 'auth=basic' "$RF_RUN/requests.log"

# Driven by a cluster repo: nodes' bmc URLs, defaults.bmc CA + credentials, a stack's bios/power.
repo=$RF_WORK/repo
mkdir -p "$repo/stacks" "$repo/rollouts"
cp "$PLUMB_SRC/examples/minimal/rollouts/"* "$repo/rollouts/"
{
  echo "cluster: rf"
  echo "defaults:"
  echo "  ssh: { user: root, known_hosts: known_hosts }"
  echo "  bmc: { ca: $RF_RUN/certs/ca.pem, credentials: \"file:$RF_RUN/credentials\" }"
  echo "nodes:"
  while read -r name url _; do
    echo "  - { name: $name, address: $name.rf.example, bmc: \"$url\", groups: [gpu] }"
  done <"$RF_RUN/bmcs.txt"
  echo "groups:"
  echo "  gpu: { stack: base, rollout: one-at-a-time }"
} >"$repo/inventory.yaml"
printf 'bios: { ProcTurboMode: Disabled }\npower: "On"\nfirmware_images: { BMC: "https://fw.example/BMC-1.46.0.bin" }\n' >"$repo/stacks/base.yaml"
git -C "$repo" init -q && git -C "$repo" add -A &&
  git -C "$repo" -c user.email=t@t.example -c user.name=t commit -qm init
n=$((n + 1)); OUT=$RF_OUT/$n.out; ERR=$RF_OUT/$n.err
"$PLUMB" bmc plan --repo "$repo" >"$OUT" 2>"$ERR" && rc=0 || rc=$?
[ "$rc" = 2 ] || { echo "--- bmc plan said:"; cat "$OUT" "$ERR"; }
check "plan from a cluster repo (its nodes, defaults.bmc, stacks) finds the BIOS change (rc=$rc)" [ "$rc" = 2 ]
check "  on the dmtf node" has 'n1: set BIOS ProcTurboMode="Disabled" (have "Enabled")' "$OUT"

pb inventory --format text
check "text inventory lists each node" bash -c "grep -c '^n[123] ' '$OUT' | grep -qx 3"
rf_finish
