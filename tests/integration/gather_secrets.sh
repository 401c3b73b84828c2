#!/usr/bin/env bash
# Secrets never printed: with an encrypted identity whose passphrase comes from
# PLUMB_SSH_PASSPHRASE, and a BMC password planted in PLUMB_BMC, neither appears in any output
# (text, json, the facts snapshot, stderr) of a good or a failing gather.
. "$(dirname "$0")/lib/gather.sh"
gt_up 4
pass="pp-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
bmc="bmcpw-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
ssh-keygen -q -t ed25519 -N "$pass" -C plumb-secret-test -f "$GT_TMP/id_enc"
for d in "$TB_RUN"/nodes/*/ssh; do cat "$GT_TMP/id_enc.pub" >>"$d/authorized_keys"; done
sed -i "s|identity: [^,]*,|identity: $GT_TMP/id_enc,|" "$REPO/inventory.yaml"
grep -q "$GT_TMP/id_enc" "$REPO/inventory.yaml" || { echo "FAIL could not point identity at the key"; exit 1; }
gt_commit "encrypted identity"
export PLUMB_BMC="admin:$bmc"

leaks() { cat "$OUT" "$ERR" "$GT_TMP"/facts*.json 2>/dev/null | grep -cF -e "$pass" -e "$bmc" || true; }

PLUMB_SSH_PASSPHRASE=$pass gather --format json --facts-out "$GT_TMP/facts1.json"
check "the encrypted key with its passphrase reads every node" test "$RC" = 0
check "no secret in json output, stderr or the snapshot" test "$(leaks)" = 0
PLUMB_SSH_PASSPHRASE=$pass gather
check "no secret in text output" test "$(leaks)" = 0

PLUMB_SSH_PASSPHRASE="$pass-wrong" gather
check "a wrong passphrase fails every node with reason auth" contains "$OUT" "0 read, 4 unreadable (4 auth)"
check "the auth error names the key, not the passphrase" contains "$OUT" "cannot load the private key $GT_TMP/id_enc"
check "no secret (nor the wrong one) in the failure output" \
  test "$(cat "$OUT" "$ERR" | grep -cF -e "$pass" -e "$bmc" || true)" = 0
gather --format json --facts-out "$GT_TMP/facts2.json"
check "without a passphrase: auth failure, exit 3" test "$RC" = 3
check "no secret anywhere" test "$(leaks)" = 0

# ssh-agent: identity left empty means "use the agent"; the encrypted key is unlocked there.
eval "$(ssh-agent -s)" >/dev/null
agent_pid=$SSH_AGENT_PID
# (|| true: the test kills the agent itself below, and a failing command in an EXIT trap under
# set -e would end the script with 1 after every check passed)
trap 'kill "$agent_pid" 2>/dev/null || true; gt_down' EXIT
SSH_ASKPASS_REQUIRE=force SSH_ASKPASS="$GT_TMP/askpass" DISPLAY=none \
  bash -c "printf '#!/bin/sh\necho %s\n' '$pass' >'$GT_TMP/askpass'; chmod 700 '$GT_TMP/askpass'; ssh-add -q '$GT_TMP/id_enc' </dev/null"
sed -i 's|identity: [^,]*, *||' "$REPO/inventory.yaml"
gt_commit "agent auth"
gather --format json
check "ssh-agent authentication reads every node" test "$RC" = 0
check "no secret anywhere (agent)" test "$(leaks)" = 0
kill "$agent_pid"
unset SSH_AUTH_SOCK
gather --format json
check "no agent and no identity: auth failure names the agent" py 'all("ssh-agent" in n["error"]["message"] for n in j["nodes"].values())'
gt_finish
