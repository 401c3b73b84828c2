#!/usr/bin/env bash
# Jump hosts: nodes of group pod-b reachable only through the testbed's head node as a bastion
# (`tb ctl behind-bastion`: their sshd drops every connect but the head sshd's), reached with
# `ssh: { jump: tbjump@<head> }` on the group, or on one node. Checks: gather and plan read
# them through it; without the jump they time out (the firewall is real); the bastion's host
# key and the nodes' are both verified; a node down behind it is named with the bastion; one
# bastion session carries every node's connection (a watch holds them open: one TCP session
# to the head, however many nodes); a node rebooted behind it is read again; the Bastion's own
# tests (tests/modules/transport/ssh_jump_test.cc) run against this testbed: a node stream nobody
# reads does not hold up another node's commands, and a bastion that stops answering (its sshd
# SIGSTOPped) is found by keepalives; bad jump values, a multi-hop one among them, are refused by
# validate with file:line and key.
. "$(dirname "$0")/lib/gather.sh"
GT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/plumb-it.XXXXXX")
export TB_RUN=$GT_TMP/$(basename "$GT_TMP")
trap gt_down EXIT
export TB_DOWNTIME=1
"$TB" up 4 --head >/dev/null
REPO=$GT_TMP/repo
"$TB" cluster-repo "$REPO" --stack "$PLUMB_SRC/tests/integration/data/plan/baseline.yaml" \
  --rollout "$PLUMB_SRC/tests/integration/data/plan/rolling.yaml" >/dev/null
HEAD_ADDR=$(awk '$1 == "head" {print $2}' "$TB_RUN/client/nodes.txt")
addr() { awk -v n="$1" '$1 == n {print $2}' "$TB_RUN/client/nodes.txt"; }
# n3 and n4 are pod-b, behind the bastion.
python3 - "$REPO/inventory.yaml" "$HEAD_ADDR" <<'PY'
import re, sys
p, head = sys.argv[1], sys.argv[2]
s = open(p).read()
for n in ("n3", "n4"):
    s = re.sub(r"(\{ name: %s, .*groups: \[gpu)\]" % n, r"\1, pod-b]", s)
s = s.replace("groups:\n", "groups:\n  pod-b: { ssh: { jump: tbjump@%s } }\n" % head, 1)
open(p, "w").write(s)
PY
gt_commit "pod-b behind the bastion"
"$TB" ctl behind-bastion n3
"$TB" ctl behind-bastion n4

check "the firewall is real: n3's sshd cannot be reached directly" \
  bash -c "! '$TB' exec timeout 3 bash -c 'exec 3<>/dev/tcp/$(addr n3)/22' 2>/dev/null"
check "... while n1's can" "$TB" exec timeout 3 bash -c "exec 3<>/dev/tcp/$(addr n1)/22"

gather --format json
check "gather reads all 4 nodes, n3 and n4 through the bastion (exit $RC)" test "$RC" = 0
check "n3's facts came back" py 'j["nodes"]["n3"]["reachable"] and "os" in j["nodes"]["n3"]["facts"]'
check "n4's facts came back" py 'j["nodes"]["n4"]["reachable"] and j["nodes"]["n4"]["facts"]["os"]["family"] == "debian"'

set +e
"$TB" exec "$PLUMB" plan --repo "$REPO" --no-scheduler --no-bmc >"$GT_TMP/plan.out" 2>&1
rc=$?
set -e
check "plan reads the nodes behind the bastion too: in sync (exit $rc)" \
  bash -c "test $rc = 0 && grep -q '4 node(s) in sync' '$GT_TMP/plan.out'"

# Without the jump, pod-b times out: the bastion is what reaches it.
sed -i 's/  pod-b: { ssh: { jump: .* } }/  pod-b: { ssh: { jump: none } }/' "$REPO/inventory.yaml"
gt_commit "pod-b direct"
gather --format json
check "jump: none: n3 and n4 time out behind the firewall (exit $RC)" \
  py 'not j["nodes"]["n3"]["reachable"] and j["nodes"]["n3"]["error"]["code"] == "ssh.timeout" and not j["nodes"]["n4"]["reachable"] and j["nodes"]["n1"]["reachable"]'
git -C "$REPO" revert --no-edit HEAD >/dev/null

# The jump on one node: its own setting beats the group's.
sed -i "s/{ name: n4, address/{ name: n4, ssh: { jump: none }, address/" "$REPO/inventory.yaml"
gt_commit "n4 direct"
gather --format json
check "a node's own jump: none beats its group's: n4 times out, n3 is read" \
  py 'j["nodes"]["n3"]["reachable"] and not j["nodes"]["n4"]["reachable"]'
git -C "$REPO" revert --no-edit HEAD >/dev/null

# Host keys: the bastion's, then a node's through the tunnel.
KH=$TB_RUN/client/known_hosts
cp "$KH" "$GT_TMP/kh.good"
grep -v "^head," "$GT_TMP/kh.good" >"$KH"
gather --format json
check "the bastion's unknown host key fails its nodes (ssh.hostkey), naming the bastion" \
  py '[j["nodes"][n]["error"]["code"] for n in ("n3", "n4")] == ["ssh.hostkey"] * 2 and "bastion" in j["nodes"]["n3"]["error"]["message"] and j["nodes"]["n1"]["reachable"]'
cp "$GT_TMP/kh.good" "$KH"
# n3's entry now carries n1's key: the node's key is checked end to end, through the tunnel.
n1key=$(awk '$1 ~ /^n1,/ {print $2, $3}' "$GT_TMP/kh.good")
awk -v k="$n1key" '$1 ~ /^n3,/ {print $1, k; next} {print}' "$GT_TMP/kh.good" >"$KH"
gather --format json
check "a changed node key behind the bastion: ssh.hostkey-changed for n3 only" \
  py 'j["nodes"]["n3"]["error"]["code"] == "ssh.hostkey-changed" and j["nodes"]["n4"]["reachable"]'
check "... the node presented it, reached through the bastion" \
  py '"the node presented" in j["nodes"]["n3"]["error"]["message"] and "reached through the bastion tbjump@" in j["nodes"]["n3"]["error"]["message"]'
# The bastion's entry carries n1's key: the bastion presented the changed key, not a node.
awk -v k="$n1key" '$1 ~ /^head,/ {print $1, k; next} {print}' "$GT_TMP/kh.good" >"$KH"
gather --format json
check "a changed bastion key: its nodes fail with ssh.hostkey-changed, saying the bastion presented it" \
  py 'j["nodes"]["n3"]["error"]["code"] == "ssh.hostkey-changed" and "the bastion presented" in j["nodes"]["n3"]["error"]["message"] and "the node presented" not in j["nodes"]["n3"]["error"]["message"]'
# n3's entry gone: the hint reaches n3 the way plumb does, through the bastion (ssh -J), not
# with ssh-keyscan, which cannot reach it from here.
grep -v "^n3," "$GT_TMP/kh.good" >"$KH"
gather --format json
check "an unknown node key behind the bastion: the hint gives ssh -J through the bastion, not ssh-keyscan" \
  py 'j["nodes"]["n3"]["error"]["code"] == "ssh.hostkey" and "ssh -J tbjump@" in j["nodes"]["n3"]["error"]["hint"] and "ssh-keyscan" not in j["nodes"]["n3"]["error"]["hint"]'
cp "$GT_TMP/kh.good" "$KH"

# A node down behind the bastion.
"$TB" ctl poweroff n4
gather --format json
check "n4 off behind the bastion: refused, the message names the bastion; n3 still read" \
  py 'j["nodes"]["n4"]["error"]["code"] in ("ssh.refused", "ssh.timeout") and "through bastion" in j["nodes"]["n4"]["error"]["message"] and j["nodes"]["n3"]["reachable"]'
"$TB" ctl poweron n4
# (wait-up connects from the client: let it through for that long)
"$TB" ctl direct n4
"$TB" ctl wait-up n4 >/dev/null
"$TB" ctl behind-bastion n4

# One bastion session for every node: a watch keeps its sessions open.
EV=$GT_TMP/events.jsonl
nsenter --net="/run/netns/$(<"$TB_RUN/netns")" "$PLUMB" watch --repo "$REPO" --interval 3s \
  --events "$EV" 2>"$GT_TMP/watch.err" &
WATCH_PID=$!
stop_watch() { [[ -z ${WATCH_PID:-} ]] || { kill "$WATCH_PID" 2>/dev/null; wait "$WATCH_PID" 2>/dev/null || true; WATCH_PID=; }; }
trap 'stop_watch; gt_down' EXIT
rounds() { grep -c '^plumb watch: round [0-9]*:' "$GT_TMP/watch.err" 2>/dev/null || true; }
wait_rounds() { # N LIMIT_S
  local end=$((SECONDS + $2))
  until (($(rounds) >= $1)); do ((SECONDS < end)) || return 1; sleep 0.5; done
}
conns() { # established TCP connections of the watch to ADDR:22
  "$TB" exec ss -Htnp state established "( dst $1 and dport = :22 )" | grep -c "pid=$WATCH_PID," || true
}
check "the watch reads every node twice" wait_rounds 2 300
check "one TCP session to the bastion for n3 and n4 ($(conns "$HEAD_ADDR"))" test "$(conns "$HEAD_ADDR")" = 1
check "none to n3 or n4 directly" test "$(($(conns "$(addr n3)") + $(conns "$(addr n4)")))" = 0
check "one to each direct node (n1: $(conns "$(addr n1)"))" test "$(conns "$(addr n1)")" = 1
# The bastion's sshd carries them: its connections to n3 and n4 come from the head's sshd.
fwd=$("$TB" exec ss -Htn state established "( dport = :22 and ( dst $(addr n3) or dst $(addr n4) ) )" | wc -l)
check "the head's sshd holds the connections to n3 and n4 ($fwd)" test "$fwd" = 2
"$TB" ctl reboot n3
has_reboot() { [[ -s $EV ]] && python3 -c 'import json,sys; sys.exit(0 if any(json.loads(l).get("event") == "node_rebooted" and json.loads(l).get("node") == "n3" for l in open(sys.argv[1]) if l.strip()) else 1)' "$EV"; }
wait_event() { local end=$((SECONDS + $1)); until has_reboot; do ((SECONDS < end)) || return 1; sleep 0.5; done; }
check "n3 rebooted behind the bastion: its node_rebooted event comes (read again through it)" wait_event 300 ||
  { tail -5 "$GT_TMP/watch.err"; cat "$EV" 2>/dev/null | tail -5; }
check "still one session to the bastion after n3's reboot" test "$(conns "$HEAD_ADDR")" = 1
kill -TERM "$WATCH_PID"
set +e
wait "$WATCH_PID"
wrc=$?
set -e
WATCH_PID=
check "SIGTERM: the watch closes its sessions, the bastion's with them, and exits 0 (exit $wrc)" test "$wrc" = 0

# The Bastion's unit tests, against this bastion and n3, n4 behind it. bastion-sig STOP|CONT
# stops or continues the head's sshd processes that serve an established session (ours).
SIG=$GT_TMP/bastion-sig
cat >"$SIG" <<EOF
#!/usr/bin/env bash
for p in \$(ss -Htnp state established "( src $HEAD_ADDR and sport = :22 )" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
  kill -"\$1" "\$p"
done
EOF
chmod +x "$SIG"
UT=${PLUMB_BUILD:-}/tests/unit_tests
unit() { # TEST-CASE-PATTERN: runs it here; its output (timings included) goes to the log
  local rc out=$GT_TMP/unit.out
  set +e
  "$TB" exec env PLUMB_TEST_BASTION_HEAD="$HEAD_ADDR" PLUMB_TEST_BASTION_NODES="$(addr n3) $(addr n4)" \
    PLUMB_TEST_BASTION_CLIENT="$TB_RUN/client" PLUMB_TEST_BASTION_FREEZE="$SIG STOP" \
    PLUMB_TEST_BASTION_THAW="$SIG CONT" \
    PLUMB_TEST_BASTION_CONNS="ss -Htn state established '( dst $(addr n3) and dport = :22 )' | wc -l" "$UT" -sf='*ssh_jump_test.cc' -tc="$1" -s >"$out" 2>&1
  rc=$?
  set -e
  "$TB" exec "$SIG" CONT   # whatever became of the test
  grep -E 'MESSAGE|skipped|FAILED|ERROR|test cases' "$out" | sed 's/^/    /' || true
  ((rc == 0)) && grep -q 'test cases: *1 | *1 passed' "$out" && ! grep -q 'skipped: PLUMB_TEST' "$out"
}
check "unit: a node stream nobody reads holds up no other node's commands ($UT)" \
  unit 'bastion: a node stream nobody reads*'
check "unit: a bastion that stops answering is dropped by keepalives, its error names it" \
  unit 'bastion: a bastion that stops answering*'
check "unit: a channel given up on while opening is closed on the bastion once it opens" \
  unit 'bastion: a channel given up on while opening*'

# Bad jumps: validate names the file:line and the key; one hop only (OpenSSH's a,b is refused).
for bad in "tbjump@" "a b" "root@host:70000" "[::1" "tbjump@$HEAD_ADDR,root@n1"; do
  sed -i "s|  pod-b: { ssh: { jump: .* } }|  pod-b: { ssh: { jump: \"$bad\" } }|" "$REPO/inventory.yaml"
  set +e
  "$PLUMB" validate --repo "$REPO" --working-tree >"$GT_TMP/v.out" 2>&1
  rc=$?
  set -e
  check "jump '$bad' is refused by validate at inventory.yaml:LINE with its key (exit $rc)" \
    bash -c "test $rc = 1 && grep -Eq 'inventory.yaml:[0-9]+(:[0-9]+)?: error: .*groups.pod-b.ssh.jump' '$GT_TMP/v.out'"
done
git -C "$REPO" checkout -q inventory.yaml
gt_finish
