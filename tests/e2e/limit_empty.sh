#!/usr/bin/env bash
# An empty intent is not "everything": a --limit given with no node term in it ('', ' ', ',',
# ', ,', '!', '!,!', --limit=) is refused on every verb that takes one (bmc's --node too): exit 1,
# a message naming the flag, its argument's position and why, a hint, and nothing read or
# changed. (A script's `--limit "$NODES"` with an empty variable used to select the whole plan,
# and roll the whole fleet under --auto-approve.)
#
# Nothing read: every node and BMC of the cluster repo points at a tripwire, loopback listeners
# that record any connection; none may come. Nothing changed: no file in the scratch directory
# (repo, journal, plan output) is new or changed.
set -uo pipefail
: "${PLUMB:?path to the plumb binary}" "${PLUMB_SRC:?source root}"
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
repo=$E2E_TMP/pod
make_cluster_repo "$PLUMB_SRC/examples/h100-pod" "$repo" >/dev/null

# The tripwire: the 32 nodes at 127.0.0.2-33, their BMCs at 127.0.1.2-33, all on one port.
trip=$E2E_TMP/tripwire.log
: >"$trip"
python3 - "$trip" "$E2E_TMP/tripwire.port" <<'EOF' &
import selectors, socket, sys
log, portfile = sys.argv[1], sys.argv[2]
sel, port = selectors.DefaultSelector(), 0
for net in ("127.0.0", "127.0.1"):
    for i in range(2, 34):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("%s.%d" % (net, i), port))
        port = s.getsockname()[1]   # the first bind picks a free port; the rest take it too
        s.listen(64)
        sel.register(s, selectors.EVENT_READ)
with open(portfile + ".tmp", "w") as f:
    f.write(str(port))
import os
os.replace(portfile + ".tmp", portfile)
while True:
    for key, _ in sel.select():
        c, peer = key.fileobj.accept()
        with open(log, "a") as f:
            f.write("connection to %s:%d\n" % key.fileobj.getsockname())
        c.close()
EOF
trip_pid=$!
trap 'kill $trip_pid 2>/dev/null; rm -rf "$E2E_TMP"' EXIT
for _ in $(seq 300); do [[ -s $E2E_TMP/tripwire.port ]] && break; sleep 0.1; done
port=$(cat "$E2E_TMP/tripwire.port" 2>/dev/null)
[[ -n $port ]] || { echo "FAIL - the tripwire did not start"; exit 1; }
perl -pi -e 's/gpu0*(\d+)\.pod-a\.example/"127.0.0.".($1+1)/ge;
             s{https://gpu0*(\d+)-bmc\.pod-a\.example}{"https://127.0.1.".($1+1).":'"$port"'"}ge;
             s/port: 22,/port: '"$port"',/' "$repo/inventory.yaml"
git -C "$repo" commit -qam "nodes and BMCs at the tripwire"
"$PLUMB" validate --repo "$repo" >"$E2E_OUT" 2>"$E2E_ERR" && pass "the tripwire repo is valid" ||
  { fail "the tripwire repo is valid"; sed 's/^/    | /' "$E2E_OUT" "$E2E_ERR" | head -20; }
grep -q "address: 127.0.0.33" "$repo/inventory.yaml" && grep -q "https://127.0.1.33:$port" "$repo/inventory.yaml" &&
  pass "every node and BMC points at the tripwire" || fail "every node and BMC points at the tripwire"

export PLUMB_JOURNAL=$E2E_TMP/journal.db PLUMB_BMC=admin:not-a-secret
# Every file of the scratch directory (repo, journal, outputs) with its size and time.
snap() { find "$E2E_TMP" ! -name .out ! -name .err ! -name .before ! -name tripwire.log -printf '%p %s %T@\n' | sort; }
snap >"$E2E_TMP/.before"

# refused VERB_ARGS... -- runs plumb with them and checks exit 1, the message and the hint, and
# that nothing was read or changed. $form is what the --limit was given as (for the message).
refused() {
  local desc="plumb $*"
  timeout 120 "$PLUMB" "$@" >"$E2E_OUT" 2>"$E2E_ERR"
  local rc=$?
  if [[ $rc == 1 ]] && grep -qE -- "^plumb [a-z ]+: error: --(limit|node|limit/--node) '.*' names no node: .* \(argument [0-9]+\)$" "$E2E_ERR" &&
    grep -q "^  hint: " "$E2E_ERR" && [[ ! -s $E2E_OUT ]]; then
    pass "$desc: exit 1, named, with a hint"
  else
    fail "$desc: exit $rc"; sed 's/^/    | /' "$E2E_OUT" "$E2E_ERR" | head -10
  fi
  if [[ -s $trip ]]; then fail "$desc: contacted $(sort -u "$trip" | head -3 | tr '\n' ' ')"; : >"$trip"; fi
  local changed
  changed=$(snap | diff "$E2E_TMP/.before" - | grep '^[<>]' | head -3)
  if [[ -n $changed ]]; then fail "$desc: changed $changed"; snap >"$E2E_TMP/.before"; fi
}

R=(--repo "$repo")
forms=('' ' ' ',' ', ,' '!' '!,!' ' ! ')
for form in "${forms[@]}"; do
  echo "# --limit '$form'"
  refused plan "${R[@]}" --limit "$form"
  refused drift "${R[@]}" --limit "$form"
  refused gather "${R[@]}" --limit "$form"
  refused health "${R[@]}" --limit "$form"
  refused acceptance "${R[@]}" --limit "$form" --out "$E2E_TMP/acc"
  refused watch "${R[@]}" --limit "$form" --once
  refused apply "${R[@]}" --limit "$form" --auto-approve --plan-out "$E2E_TMP/plan.json"
  refused apply "$E2E_TMP/saved-plan.json" --limit "$form" --auto-approve
  for sub in inventory plan apply; do
    refused bmc "$sub" "${R[@]}" --limit "$form"
    refused bmc "$sub" "${R[@]}" --node "$form"
  done
  refused bmc apply "${R[@]}" --node gpu001 --node "$form"   # one of several
  refused bmc reset gpu001 "${R[@]}" --limit "$form" --type off   # (--limit takes several values)
  refused runs --limit "$form"
  refused history --limit "$form"
done
echo "# --limit= (the = form)"
refused plan "${R[@]}" --limit=
refused apply "${R[@]}" --limit=, --auto-approve
refused gather "${R[@]}" --limit='!'
refused bmc apply "${R[@]}" --node=

echo "# the message"
"$PLUMB" apply --repo "$repo" --limit '' --auto-approve >"$E2E_OUT" 2>"$E2E_ERR"
expect_grep "^plumb apply: error: --limit '' names no node: it is empty \(argument 4\)$" "$E2E_ERR" "names the verb, the flag, the value, why and where"
expect_grep "^  hint: leave --limit out to mean every node; .*\\$\\{NODES:\\?no nodes\\}" "$E2E_ERR" "the hint says how a script guards its variable"
"$PLUMB" gather --repo "$repo" --limit ', ,' >"$E2E_OUT" 2>"$E2E_ERR"
expect_grep "names no node: it holds only commas and blanks" "$E2E_ERR" "only commas: said so"
"$PLUMB" plan --repo "$repo" --limit '!' >"$E2E_OUT" 2>"$E2E_ERR"
expect_grep "names no node: its '!' names nothing to exclude" "$E2E_ERR" "only '!': said so"
"$PLUMB" bmc plan --repo "$repo" --node '' >"$E2E_OUT" 2>"$E2E_ERR"
expect_grep "^plumb bmc plan: error: --limit/--node '' names no node" "$E2E_ERR" "bmc names both spellings of its flag"
"$PLUMB" runs --limit '' >"$E2E_OUT" 2>"$E2E_ERR"
expect_grep "^  hint: plumb runs --last N counts" "$E2E_ERR" "runs (no node patterns there) points at --last"

echo "# a node argument that is empty"
expect_rc 1 "show ''" -- "$PLUMB" show "${R[@]}" ''
expect_grep "no node ''" "$E2E_ERR" "show names the empty node"

echo "# a --limit that names nodes is still taken (and stops only at the tripwire's door)"
expect_rc 1 "plan --limit 'gpu001,!' is read as gpu001" -- "$PLUMB" plan "${R[@]}" --limit 'gpu001,!'
expect_no_grep "names no node" "$E2E_ERR" "  not refused as empty"
cat "$E2E_OUT" "$E2E_ERR" >"$E2E_TMP/both"
expect_grep "gpu001" "$E2E_TMP/both" "  it tried gpu001 (and could not read it)"
grep -q "127.0.0.2:$port" "$trip" && pass "  the tripwire saw gpu001" || fail "  the tripwire saw gpu001"
! grep -qvE "127.0.[01].2:$port" "$trip" && pass "  and no other node or BMC" ||
  fail "  the tripwire saw another node: $(grep -vE "127.0.[01].2:" "$trip" | head -2)"
finish
