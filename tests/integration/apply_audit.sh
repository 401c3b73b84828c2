#!/usr/bin/env bash
# Evidence an auditor accepts, from a real apply on the testbed (1 node, real Slurm):
#   - the run records who ran it, who approved it, the commit's author, committer, signer;
#     plumb runs and plumb history show them; plumb history NODE for an unknown node is an error;
#   - plumb history --verify passes on the journal as written, and names the row after an
#     `UPDATE steps SET outcome=...` made behind plumb's back (exit 1);
#   - plumb audit export (json, html): per node what was applied, when, from which commit, by
#     whom, with the chain's head; the HTML rendered in headless Chromium: the node's row in the
#     DOM, and a green chain banner - red once the journal was edited.
. "$(dirname "$0")/lib/apply.sh"
ap_up 1 "drain: { scheduler: slurm, timeout: 5m }
max_unavailable: 1
canary: 1"
cp "$PLUMB_SRC/tests/integration/data/plan/baseline.yaml" "$REPO/stacks/gpu-2025q4.yaml"
sed -i 's/vm.swappiness: 60/vm.swappiness: 10/' "$REPO/stacks/gpu-2025q4.yaml"
git -C "$REPO" -c user.name="Dana Author" -c user.email=dana@example.com commit -q -am "swappiness 10"
SHA=$(git -C "$REPO" rev-parse HEAD)

apply --ref HEAD --auto-approve --approved-by carol
check "apply exits 0 (rc=$RC)" test "$RC" = 0
check "n1 has vm.swappiness 10" bash -c "[[ \$($TB ssh n1 sysctl -n vm.swappiness) == 10 ]]"

plumb_in runs --format json >"$AP_TMP/runs.json"
check "the run records the operator, the approver, the author and committer" \
  pyj "$AP_TMP/runs.json" "j[0]['who']['operator'] == 'root' and j[0]['who']['approver'] == 'carol' and j[0]['who']['author'] == 'Dana Author <dana@example.com>' and j[0]['who']['committer'] == 'Dana Author <dana@example.com>'"
check "the run records why there is no signer (no policy)" \
  pyj "$AP_TMP/runs.json" "j[0]['who']['signer'] == 'not signed; no policy requires signatures'"
plumb_in runs >"$AP_TMP/runs.txt"
check "plumb runs shows by whom" grep -q "root ok:carol" "$AP_TMP/runs.txt"
plumb_in history n1 >"$AP_TMP/hist.txt"
check "plumb history n1 heads the run with who" grep -q "by root, approved by carol; commit not signed" "$AP_TMP/hist.txt"
plumb_in history n99 >"$AP_TMP/out" 2>"$AP_TMP/err" && RC=0 || RC=$?
check "plumb history for an unknown node is an error (rc=$RC)" test "$RC" = 1
check "  naming it" grep -q "no run in .* touched a node named 'n99'" "$AP_TMP/err"

plumb_in history --verify >"$AP_TMP/verify.txt" 2>&1 && RC=0 || RC=$?
check "history --verify: the journal as written verifies (rc=$RC)" test "$RC" = 0
HEAD=$(sed -n 's/.*, head \(sha256:[0-9a-f]*\)$/\1/p' "$AP_TMP/verify.txt")
check "history --verify prints the chain's head" test -n "$HEAD"

plumb_in audit export --since 2000-01-01 --format json --out "$AP_TMP/audit.json" 2>"$AP_TMP/err" && RC=0 || RC=$?
check "audit export json (rc=$RC)" test "$RC" = 0
check "audit json: n1, the change, the commit, who, the chain head" pyj "$AP_TMP/audit.json" \
  "j['nodes'][0]['node'] == 'n1' and j['nodes'][0]['applied'][0]['changes'][0]['key'] == 'sysctl.vm.swappiness' and j['nodes'][0]['applied'][0]['changes'][0]['outcome'] == 'ok' and j['nodes'][0]['applied'][0]['commit'] == '$SHA' and j['nodes'][0]['applied'][0]['who']['approver'] == 'carol' and j['chain']['head'] == '$HEAD' and j['chain']['verified']"
plumb_in audit export --since 2999-01-01 --format json >"$AP_TMP/none.json" 2>/dev/null
check "audit json: nothing since a later date" pyj "$AP_TMP/none.json" "j['nodes'] == []"
plumb_in audit export --since yesterday >"$AP_TMP/out" 2>"$AP_TMP/err" && RC=0 || RC=$?
check "audit export: a date it cannot read is an error (rc=$RC)" test "$RC" = 1

# ---- the HTML, rendered -------------------------------------------------------------------
CHROME=$(command -v chromium || command -v chromium-browser || true)   # scripts/install-deps.sh
REGIONS=$PLUMB_SRC/tests/e2e/lib/png_regions.py
chrome() { # chrome --dump-dom|--screenshot=PNG HTML
  timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
    --user-data-dir="$(mktemp -d "$AP_TMP/chrome.XXXXXX")" --window-size=1400,900 "$1" "file://$2" 2>/dev/null
}
banner() { # banner PNG RRGGBB: the largest region of that colour, in pixels
  python3 "$REGIONS" "$1" "$2" | sed -n 's/.*regions=\([0-9]*\).*/\1/p'
}
plumb_in audit export --since 2000-01-01 --format html --out "$AP_TMP/audit.html" 2>/dev/null
if [[ -z $CHROME ]]; then
  echo "PARTIAL SKIP: chromium is not installed (scripts/install-deps.sh installs it): the HTML is not rendered"
else
  chrome --dump-dom "$AP_TMP/audit.html" >"$AP_TMP/dom.html"
  check "chromium: the rendered DOM has n1's row, the change, the commit and the approver" \
    bash -c "grep -q 'id=\"node-n1\"' $AP_TMP/dom.html && grep -q 'sysctl.vm.swappiness' $AP_TMP/dom.html && grep -q $SHA $AP_TMP/dom.html && grep -q '<b>approved by</b> carol' $AP_TMP/dom.html"
  chrome --screenshot="$AP_TMP/ok.png" "$AP_TMP/audit.html" >/dev/null
  green=$(banner "$AP_TMP/ok.png" 1a9641) red=$(banner "$AP_TMP/ok.png" d7191c)
  echo "verified page: green banner ${green:-0} px, red ${red:-0} px"
  check "chromium: a verified journal shows a green banner" test "${green:-0}" -gt 20000
  check "chromium: and no red one" test "${red:-0}" -lt 2000
fi

# ---- someone edits the journal ------------------------------------------------------------
python3 - "$JOURNAL" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE steps SET outcome='failed', error='it never happened' WHERE step='verify'")
db.commit()
PY
plumb_in history --verify >"$AP_TMP/verify.txt" 2>&1 && RC=0 || RC=$?
check "history --verify: the edited journal does not verify (rc=$RC)" test "$RC" = 1
check "  it names the row and the field" \
  grep -Eq "steps row [0-9]+ \(run [0-9a-f-]+, node n1, step verify\) was edited after it was written .*outcome \"ok\" in the chain, \"failed\" now" "$AP_TMP/verify.txt"
plumb_in audit export --since 2000-01-01 --format html --out "$AP_TMP/bad.html" 2>"$AP_TMP/err" && RC=0 || RC=$?
check "audit export of an edited journal: written, exit 1 (rc=$RC)" bash -c "test $RC = 1 && test -s $AP_TMP/bad.html"
if [[ -n $CHROME ]]; then
  chrome --screenshot="$AP_TMP/bad.png" "$AP_TMP/bad.html" >/dev/null
  red=$(banner "$AP_TMP/bad.png" d7191c) green=$(banner "$AP_TMP/bad.png" 1a9641)
  echo "edited page: red banner ${red:-0} px, green ${green:-0} px"
  check "chromium: an edited journal shows a red banner" test "${red:-0}" -gt 20000
  check "chromium: and no green one" test "${green:-0}" -lt 2000
  cp "$AP_TMP/ok.png" "${PLUMB_BUILD:-$AP_TMP}/audit-html-screenshot.png" 2>/dev/null || true
fi
ap_finish
