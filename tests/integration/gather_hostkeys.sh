#!/usr/bin/env bash
# Host keys: an unknown key fails only that node ("host key"), a changed key is refused loudly,
# --accept-new-host-keys records unknown keys (the node's real one) but never replaces a changed
# key.
. "$(dirname "$0")/lib/gather.sh"
gt_up 4
kh=$TB_RUN/client/known_hosts
# n2: forget its key. n3: record n4's key for n3's address (what a reinstall or a MITM looks like).
n4key=$(awk '$1 ~ /^n4,/ {print $2, $3}' "$kh")
awk -v k="$n4key" '$1 ~ /^n2,/ {next} $1 ~ /^n3,/ {print $1, k; next} {print}' "$kh" >"$kh.new"
mv "$kh.new" "$kh"

gather --format json
check "partial gather exits 3" test "$RC" = 3
check "n1 and n4 are read" py 'j["nodes"]["n1"]["reachable"] and j["nodes"]["n4"]["reachable"]'
check "n2 fails with ssh.hostkey (unknown)" py 'j["nodes"]["n2"]["error"]["code"] == "ssh.hostkey"'
check "n3 fails with ssh.hostkey-changed" py 'j["nodes"]["n3"]["error"]["code"] == "ssh.hostkey-changed"'
check "summary gives the reasons" py 'j["summary"]["reasons"] == {"n2": "host key", "n3": "host key changed"}'

gather
check "text lists n2 with reason 'host key'" contains "$OUT" "n2  [host key] "
check "text says the key is unknown and how to fix it" contains "$OUT" "--accept-new-host-keys"
check "text shouts HOST KEY CHANGED for n3" contains "$OUT" "n3  [host key changed] n3 (root@127.10.0.4:22): HOST KEY CHANGED"
check "no known_hosts line was added without the opt-in" test "$(grep -c 127.10.0.3 "$kh" || true)" = 0

gather --accept-new-host-keys --format json
check "with --accept-new-host-keys n2 is read" py 'j["nodes"]["n2"]["reachable"]'
check "... and n3 (changed) is still refused" py 'j["nodes"]["n3"]["error"]["code"] == "ssh.hostkey-changed"'
real=$(awk '{print $2}' "$TB_RUN/nodes/n2/ssh/ssh_host_ed25519_key.pub")
check "the recorded key is n2's real host key" grep -q "127.10.0.3 ssh-ed25519 $real" "$kh"
check "n3's wrong entry was not replaced" grep -q "^n3,127.10.0.4 $n4key\$" "$kh"

gather --limit n2
check "n2 is now known without the flag" test "$RC" = 0
gt_finish
