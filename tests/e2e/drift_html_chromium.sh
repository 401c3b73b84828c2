#!/usr/bin/env bash
# The drift HTML page, rendered for real: headless Chromium screenshots it, and the PNG must
# show a heat-map cell in the drift colour (the drifted node) among in-sync cells, and a
# control page with no drift must show none. Without chromium (scripts/install-deps.sh installs
# it) the test says so and exits 77: ctest counts it skipped.
set -uo pipefail
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $CHROME ]]; then
  # Tests install nothing: scripts/install-deps.sh installs chromium (`make test` runs it).
  echo "SKIP: chromium is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
GEN() { python3 "$PLUMB_SRC/bench/plan/gen.py" --template "$PLUMB_SRC/bench/plan/template-facts.json" --nodes 16 --no-upgrade "$@" >/dev/null; }
shot() { # HTML PNG
  timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
    --user-data-dir="$(mktemp -d "$E2E_TMP/chrome.XXXXXX")" --window-size=1400,900 \
    --screenshot="$2" "file://$1" >/dev/null 2>&1
}
REGIONS=$PLUMB_SRC/tests/e2e/lib/png_regions.py

GEN --out "$E2E_TMP/d" --drift-every 11        # gpu00011 drifted
"$PLUMB" drift --repo "$E2E_TMP/d/repo" --facts "$E2E_TMP/d/facts.json" --no-bmc --format html --out "$E2E_TMP/d.html" 2>/dev/null
[[ $? == 2 ]] && pass "drift html: exit 2" || fail "drift html: exit 2"
shot "$E2E_TMP/d.html" "$E2E_TMP/d.png"
[[ -s $E2E_TMP/d.png ]] && pass "chromium wrote a screenshot" || { fail "chromium wrote a screenshot"; finish; }
red=$(python3 "$REGIONS" "$E2E_TMP/d.png" d7191c)
green=$(python3 "$REGIONS" "$E2E_TMP/d.png" 1a9641)
echo "drift colour: $red"
echo "in-sync colour: $green"
python3 - "$red" "$green" <<'PY' && pass "screenshot: one drift-coloured heat-map cell, 15 in-sync cells, not blank" || fail "screenshot content"
import sys
def parse(s):
    d = dict(p.split("=", 1) for p in s.split()[1:])
    return int(d["distinct"]), [int(x) for x in d["regions"].split(",")] if d["regions"] != "none" else []
distinct, red = parse(sys.argv[1])
_, green = parse(sys.argv[2])
cell = 96 * 44
big_red = [r for r in red if r > cell * 0.6]
big_green = [g for g in green if g > cell * 0.6]
assert distinct > 10, "blank page"
assert len(big_red) == 1, big_red
assert len(big_green) == 15, big_green
PY

GEN --out "$E2E_TMP/s" --drift-every 0
"$PLUMB" drift --repo "$E2E_TMP/s/repo" --facts "$E2E_TMP/s/facts.json" --no-bmc --format html --out "$E2E_TMP/s.html" 2>/dev/null
shot "$E2E_TMP/s.html" "$E2E_TMP/s.png"
red=$(python3 "$REGIONS" "$E2E_TMP/s.png" d7191c)
echo "control, drift colour: $red"
python3 -c 'import sys; r=[int(x) for x in sys.argv[1].split("regions=")[1].split(",") if x != "none"]; sys.exit(0 if not [x for x in r if x > 96*44*0.6] else 1)' "$red" \
  && pass "control page (no drift): no drift-coloured cell" || fail "control page (no drift): no drift-coloured cell"
cp "$E2E_TMP/d.png" "${PLUMB_BUILD:-$E2E_TMP}/drift-html-screenshot.png" 2>/dev/null || true
finish
