#!/usr/bin/env bash
# The README's module table is `plumb modules` (the registry), so the two cannot disagree; and
# `plumb modules --format json` lists the same modules (what tests use instead of a list of
# their own).
set -uo pipefail
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
expect_rc 0 "plumb modules prints the table" -- "$PLUMB" modules
cp "$E2E_OUT" "$E2E_TMP/table.md"
sed -n '/^<!-- plumb modules -->$/,/^<!-- \/plumb modules -->$/p' "$PLUMB_SRC/README.md" |
  sed '1d;$d' >"$E2E_TMP/readme.md"
if [[ -s $E2E_TMP/readme.md ]] && diff -u "$E2E_TMP/readme.md" "$E2E_TMP/table.md"; then
  pass "README's module table is plumb modules' output"
else
  fail "README's module table differs from plumb modules (regenerate it with: plumb modules)"
fi
expect_rc 0 "plumb modules --format json" -- "$PLUMB" modules --format json
python3 - "$E2E_OUT" "$E2E_TMP/table.md" <<'PY' && pass "the JSON and the table list the same modules" || fail "JSON and table disagree"
import json, sys
mods = json.load(open(sys.argv[1]))
rows = [l.split("|")[1].strip().split(" ")[0] for l in open(sys.argv[2]).read().splitlines()[2:]]
names = [m["name"] for m in mods]
assert names == rows, (names, rows)
assert all(m["channel"] in ("ssh", "bmc") for m in mods)
assert {"firmware", "bios", "power"} == {m["name"] for m in mods if m["channel"] == "bmc"}
assert {"dcgm", "gpu_health", "nccl_bw", "ib_health"} == {m["name"] for m in mods if m["kind"] == "health"}
assert {"dcgm", "nccl_bw"} == {m["name"] for m in mods if m["on_demand"]}
PY
finish
