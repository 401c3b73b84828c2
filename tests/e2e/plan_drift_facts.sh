#!/usr/bin/env bash
# plan / drift / diff from recorded facts (no testbed): exit codes exact, every drift format
# valid, repair vs intent, waivers. The facts are a real testbed node's snapshot
# (bench/plan/template-facts.json) copied to 8 synthetic nodes by bench/plan/gen.py.
set -uo pipefail
. "$PLUMB_SRC/tests/e2e/lib.sh"
. "$PLUMB_SRC/tests/third_party_schemas.sh"
make_tmp
GEN() { python3 "$PLUMB_SRC/bench/plan/gen.py" --template "$PLUMB_SRC/bench/plan/template-facts.json" --nodes 8 "$@" >/dev/null; }
P() { "$PLUMB" "$@"; }
RO=(--no-scheduler --no-bmc)

GEN --out "$E2E_TMP/sync" --no-upgrade --drift-every 0
S=$E2E_TMP/sync
expect_rc 0 "plan, nothing to change: --detailed-exitcode 0" -- P plan --repo "$S/repo" --facts "$S/facts.json" "${RO[@]}" --detailed-exitcode
expect_grep "No changes: 8 node\(s\) in sync" "$E2E_OUT" "plan says no changes"
expect_rc 0 "drift, in sync: 0" -- P drift --repo "$S/repo" --facts "$S/facts.json" --no-bmc
# --tag-stacks writes the scheduler's tags from a live read of every pin at a commit only.
expect_rc 1 "drift --tag-stacks from a snapshot: refused (1)" -- P drift --repo "$S/repo" --facts "$S/facts.json" --tag-stacks
expect_grep 'not from a recorded snapshot \(--facts\)' "$E2E_ERR" "the refusal names --facts, with a hint"
expect_rc 1 "drift --tag-stacks --no-bmc: refused (1)" -- P drift --repo "$S/repo" --no-bmc --tag-stacks
expect_grep 'not from a read without the BMCs \(--no-bmc\)' "$E2E_ERR" "the refusal names --no-bmc"

GEN --out "$E2E_TMP/up" --drift-every 4 --marker
U=$E2E_TMP/up
expect_rc 2 "plan with changes: --detailed-exitcode 2" -- P plan --repo "$U/repo" --facts "$U/facts.json" "${RO[@]}" --detailed-exitcode --out "$E2E_TMP/plan.json"
expect_grep '^~ gpu\[00001-00003,00005-00007\] \(6 nodes\)  \[reboot\]' "$E2E_OUT" "identical nodes collapsed"
expect_grep '~ nvidia.driver: 535.161.08 -> 550.90.07  \(reboot, repair\)|~ nvidia.driver: 535.161.08 -> 550.90.07  \(reboot, intent\)' "$E2E_OUT" "driver change with disruption and reason"
expect_grep '~ sysctl.vm.swappiness: 1 -> 60  \(none, repair\)' "$E2E_OUT" "hand-made sysctl change is a repair"
expect_grep '^Peak nodes out at once: ' "$E2E_OUT" "peak nodes out"
expect_grep '"format_version": 3' "$E2E_TMP/plan.json" "plan file written"
expect_rc 0 "plan without --detailed-exitcode: 0" -- P plan --repo "$U/repo" --facts "$U/facts.json" "${RO[@]}"
expect_rc 2 "plan --format json: 2" -- P plan --repo "$U/repo" --facts "$U/facts.json" "${RO[@]}" --format json --detailed-exitcode
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["format_version"]==3 and len(j["nodes"])==8' "$E2E_OUT" \
  && pass "plan json parses, 8 nodes" || fail "plan json parses, 8 nodes"
expect_rc 2 "plan --format markdown: 2, and the plan file written" -- P plan --repo "$U/repo" --facts "$U/facts.json" \
  "${RO[@]}" --format markdown --detailed-exitcode --out "$E2E_TMP/plan-md.json"
expect_grep '^### plumb plan: cluster `bench` at `[0-9a-f]{12}`' "$E2E_OUT" "markdown: the heading"
expect_grep '^\*\*Plan: 8 node\(s\) to change \(8 reboot\)' "$E2E_OUT" "markdown: the summary line first"
expect_grep '^<details><summary><code>gpu\[00001-00003,00005-00007\]</code> \(6 nodes\) — reboot</summary>' "$E2E_OUT" "markdown: nodes collapsed by host list"
expect_grep 'the whole plan: the plan file `plan-md.json`' "$E2E_OUT" "markdown: points at the plan file"
[[ -s $E2E_TMP/plan-md.json ]] && pass "markdown: the plan file is written too" || fail "markdown: the plan file is written too"

expect_rc 2 "drift found: 2" -- P drift --repo "$U/repo" --facts "$U/facts.json" --no-bmc
for fmt in json junit sarif prom html; do
  expect_rc 2 "drift --format $fmt: 2" -- P drift --repo "$U/repo" --facts "$U/facts.json" --no-bmc --format "$fmt" --out "$E2E_TMP/drift.$fmt"
done
if ! command -v xmllint >/dev/null; then
  fail "xmllint missing (scripts/install-deps.sh installs libxml2-utils)"
elif xsd=$(third_party_schema junit-10.xsd "the JUnit XML schema"); then
  expect_rc 0 "junit validates against junit-10.xsd" -- xmllint --noout --schema "$xsd" "$E2E_TMP/drift.junit"
fi
python3 - "$E2E_TMP/drift.sarif" "$E2E_TMP/drift.json" <<'PY' && pass "sarif/json: results at stacks/bench.yaml, repair vs intent" || fail "sarif/json content"
import json, sys
s = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))
r = s["runs"][0]["results"]
assert s["version"] == "2.1.0" and r
assert all(x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "stacks/bench.yaml" for x in r)
c = {(n["node"], k["key"]): k for n in d["nodes"] for k in n["checks"]}
assert c[("gpu00004", "sysctl.vm.swappiness")]["reason"] == "repair"
assert c[("gpu00001", "sysctl.vm.swappiness")]["status"] == "in_sync"
assert d["exit_code"] == 2
PY
expect_grep '^plumb_drift\{cluster="bench",node="gpu00004",module="sysctl"\} 1$' "$E2E_TMP/drift.prom" "prom gauge for the drifted module"

# Waived: the hand tuning on gpu00004/8 is waived, the driver is not -> still 2; waive both -> 0.
GEN --out "$E2E_TMP/w" --no-upgrade --drift-every 4 --marker
W=$E2E_TMP/w
printf 'waivers:\n  - { nodes: "gpu0000[4-8]", keys: "sysctl.*", reason: "tuning trial", owner: ops, expires: 2099-12-31 }\n' >"$W/repo/waivers.yaml"
git -C "$W/repo" add -A && git -C "$W/repo" commit -qm waive
expect_rc 0 "all drift waived: 0 (never 2 for nothing to do)" -- P drift --repo "$W/repo" --facts "$W/facts.json" --no-bmc
expect_grep 'waived: tuning trial' "$E2E_OUT" "waived drift is shown as waived"
sed -i 's/2099-12-31/2020-01-01/' "$W/repo/waivers.yaml" && git -C "$W/repo" commit -qam expire
expect_rc 2 "expired waiver counts as drift: 2" -- P drift --repo "$W/repo" --facts "$W/facts.json" --no-bmc
expect_grep 'expired on 2020-01-01' "$E2E_OUT" "expired waiver warns"

# Unreadable nodes: partial (3) when nothing else; drift (2) wins.
GEN --out "$E2E_TMP/u" --no-upgrade --drift-every 0 --unreadable gpu00002
expect_rc 1 "drift, one node unreadable, no drift: 1" -- P drift --repo "$E2E_TMP/u/repo" --facts "$E2E_TMP/u/facts.json" --no-bmc
expect_rc 1 "plan --detailed-exitcode, no changes, one unreadable: 1" -- P plan --repo "$E2E_TMP/u/repo" --facts "$E2E_TMP/u/facts.json" "${RO[@]}" --detailed-exitcode
expect_grep 'PLAN INCOMPLETE' "$E2E_OUT" "plan says incomplete"
GEN --out "$E2E_TMP/u2" --drift-every 0 --unreadable gpu00002
expect_rc 2 "drift and an unreadable node: 2" -- P drift --repo "$E2E_TMP/u2/repo" --facts "$E2E_TMP/u2/facts.json" --no-bmc

# Health findings are findings, not changes (issue 33). Every node pins gpu_health and reads
# it; gpu00003 has 2 uncorrected ECC errors on GPU 3 (the others none).
GEN --out "$E2E_TMP/h" --no-upgrade --drift-every 0
H=$E2E_TMP/h
python3 - "$H" <<'PY'
import json, sys
h = sys.argv[1]
stack = json.load(open(h + "/repo/stacks/bench.yaml"))
stack["health"] = {"gpu_health": {"max_uncorrected_ecc": 0}}
json.dump(stack, open(h + "/repo/stacks/bench.yaml", "w"), indent=1)
snap = json.load(open(h + "/facts.json"))
for name, node in snap["nodes"].items():
    node["facts"]["gpu_health"] = {"nvml": "ok", "gpu_count": 8, "xids": [], "xid_counts": {},
        "gpus": [{"index": i, "uncorrected_volatile": 2 if (name == "gpu00003" and i == 3) else 0} for i in range(8)]}
json.dump(snap, open(h + "/facts.json", "w"))
PY
git -C "$H/repo" commit -qam "pin gpu health"
expect_rc 0 "plan: a node whose only finding is a failed check is no change (--detailed-exitcode 0)" -- \
  P plan --repo "$H/repo" --facts "$H/facts.json" "${RO[@]}" --detailed-exitcode --out "$E2E_TMP/h-plan.json"
expect_grep '^No changes: 8 node\(s\) in sync, 0 unreadable; health: 1 node\(s\) unhealthy, 1 finding\(s\)\.$' "$E2E_OUT" "plan: in sync, the finding counted apart"
expect_grep '^    ! gpu_health: GPU uncorrected ECC errors on GPU 3: 2 \(max 0\): 2 uncorrected ECC errors since the driver loaded > 0  stacks/bench.yaml:[0-9]+:[0-9]+$' "$E2E_OUT" "plan: the finding names the check, the GPU, the value and its threshold"
expect_no_grep 'health\.gpu_health' "$E2E_OUT" "plan: never shown as a change"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["nodes"]==[] and j["batches"]==[] and j["health"][0]["node"]=="gpu00003" and j["health"][0]["findings"][0]["subject"]=="GPU 3"' "$E2E_TMP/h-plan.json" \
  && pass "plan file: the finding in \"health\", no node, no batch" || fail "plan file: health section"
expect_rc 0 "drift: a failed check is not drift (exit 0)" -- P drift --repo "$H/repo" --facts "$H/facts.json" --no-bmc
expect_grep '^Health \(findings, not drift' "$E2E_OUT" "drift text: the health section"
expect_rc 0 "drift --format json: 0" -- P drift --repo "$H/repo" --facts "$H/facts.json" --no-bmc --format json --out "$E2E_TMP/h.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); n={x["node"]: x for x in d["nodes"]}; assert n["gpu00003"]["findings"][0]["measured"]==2 and n["gpu00003"]["drift"]==0 and d["summary"]["unhealthy_nodes"]==1' "$E2E_TMP/h.json" \
  && pass "drift json: the finding on its node" || fail "drift json: the finding on its node"
# With a change on every node: gpu00003 is skipped (the rollout's unhealthy: skip, the default).
sed -i 's/"vm.swappiness": 60/"vm.swappiness": 61/' "$H/repo/stacks/bench.yaml"
git -C "$H/repo" commit -qam "swappiness 61"
expect_rc 2 "plan with changes and an unhealthy node: 2" -- \
  P plan --repo "$H/repo" --facts "$H/facts.json" "${RO[@]}" --detailed-exitcode --out "$E2E_TMP/h-plan2.json"
expect_grep '^~ gpu00003  \[none\]  SKIPPED: unhealthy \(rollout rolling: unhealthy: skip; see Health\)$' "$E2E_OUT" "plan: the unhealthy node's changes shown, skipped"
expect_grep '^Plan: 7 node\(s\) to change' "$E2E_OUT" "plan: the skipped node is not counted as to change"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); b=[n for x in j["batches"] for n in x["nodes"]]; s=[n["node"] for n in j["nodes"] if n["skipped_unhealthy"]]; assert s==["gpu00003"] and "gpu00003" not in b and len(b)==7' "$E2E_TMP/h-plan2.json" \
  && pass "plan file: gpu00003 skipped, in no batch; the 7 others batched" || fail "plan file: skipped node"
# Only the unhealthy node has changes: nothing to apply (its changes are still pending: 2), and
# apply says so and touches nothing (no node is even contacted: exit 0).
sed -i 's/"vm.swappiness": 61/"vm.swappiness": 60/' "$H/repo/stacks/bench.yaml"
git -C "$H/repo" commit -qam "swappiness 60"
python3 - "$H/facts.json" <<'PY'
import json, sys
snap = json.load(open(sys.argv[1]))
snap["nodes"]["gpu00003"]["facts"]["sysctl"]["values"]["vm.swappiness"] = "1"
json.dump(snap, open(sys.argv[1], "w"))
PY
expect_rc 2 "plan, only the unhealthy node has changes: 2 (pending)" -- \
  P plan --repo "$H/repo" --facts "$H/facts.json" "${RO[@]}" --detailed-exitcode --out "$E2E_TMP/h-plan3.json"
expect_grep '^Nothing to apply: 1 node\(s\) with changes left as they are \(unhealthy\), 7 in sync' "$E2E_OUT" "plan: nothing to apply, said so"
expect_rc 0 "apply of that plan: 0, nothing applied" -- \
  env PLUMB_JOURNAL="$E2E_TMP/journal.db" "$PLUMB" apply "$E2E_TMP/h-plan3.json" --repo "$H/repo" --auto-approve
expect_grep '^nothing to apply: every node with changes is left as it is \(unhealthy\)$' "$E2E_OUT" "apply: nothing to apply"
expect_grep 'left as it is, unhealthy \(rollout rolling: unhealthy: skip\): gpu00003; repair, then plan again' "$E2E_ERR" "apply: names the node it leaves, and why"

# When the facts were read: shown in every format; a snapshot older than --max-facts-age warns.
python3 - "$S/facts.json" "$E2E_TMP/old.json" "$E2E_TMP/undated.json" <<'PY'
import datetime, json, sys
snap = json.load(open(sys.argv[1]))
old = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=40, hours=1)
snap["gathered_at"] = old.strftime("%Y-%m-%dT%H:%M:%S.000Z")
json.dump(snap, open(sys.argv[2], "w"))
del snap["gathered_at"]
json.dump(snap, open(sys.argv[3], "w"))
PY
expect_rc 0 "plan from a 40-day-old snapshot: still planned" -- P plan --repo "$S/repo" --facts "$E2E_TMP/old.json" "${RO[@]}"
expect_grep '^facts gathered 20[0-9-]+T[0-9:.]+Z, 40d [0-9]+h before$' "$E2E_OUT" "plan text: when the facts were gathered, and how long before"
expect_grep 'warning: the facts in .*old.json were gathered at .*, 40d [0-9]+h before this run \(more than --max-facts-age 24h\)' "$E2E_OUT" "plan: warns the snapshot is older than --max-facts-age"
expect_rc 0 "plan --max-facts-age 60d: no warning" -- P plan --repo "$S/repo" --facts "$E2E_TMP/old.json" "${RO[@]}" --max-facts-age 60d
expect_no_grep 'more than --max-facts-age' "$E2E_OUT" "plan --max-facts-age 60d: no warning"
expect_rc 0 "drift from the old snapshot: 0 (a warning, not drift)" -- P drift --repo "$S/repo" --facts "$E2E_TMP/old.json" --no-bmc
expect_grep '^facts gathered 20[0-9-]+T[0-9:.]+Z, 40d [0-9]+h before$' "$E2E_OUT" "drift text: the facts' time"
for fmt in json junit sarif prom html; do
  P drift --repo "$S/repo" --facts "$E2E_TMP/old.json" --no-bmc --format "$fmt" --out "$E2E_TMP/aged-drift.$fmt" >/dev/null 2>&1
done
P plan --repo "$S/repo" --facts "$E2E_TMP/old.json" "${RO[@]}" --format markdown >"$E2E_TMP/aged-plan.md" 2>/dev/null
P plan --repo "$S/repo" --facts "$E2E_TMP/old.json" "${RO[@]}" --format json >"$E2E_TMP/aged-plan.json" 2>/dev/null
g=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gathered_at"])' "$E2E_TMP/old.json")
for f in aged-drift.json aged-drift.junit aged-drift.sarif aged-drift.html aged-plan.md aged-plan.json; do
  grep -qF "$g" "$E2E_TMP/$f" && pass "$f says when the facts were gathered" || fail "$f does not say $g"
done
expect_grep '^plumb_facts_gathered_timestamp_seconds\{cluster="bench"\} [0-9]+$' "$E2E_TMP/aged-drift.prom" "prom: the facts' time"
expect_rc 0 "plan from a snapshot that does not say when: planned" -- P plan --repo "$S/repo" --facts "$E2E_TMP/undated.json" "${RO[@]}"
expect_grep 'does not say when it was gathered' "$E2E_OUT" "plan warns the snapshot's age is unknown"
expect_grep '^facts gathered: not recorded$' "$E2E_OUT" "plan text says the time is not recorded"
expect_rc 1 "plan --max-facts-age soon: 1" -- P plan --repo "$S/repo" --facts "$S/facts.json" "${RO[@]}" --max-facts-age soon

# Errors: 1.
expect_rc 1 "bad ref: 1" -- P plan --repo "$S/repo" --ref no-such-ref --facts "$S/facts.json" "${RO[@]}" --detailed-exitcode
echo '{"format":"nope"}' >"$E2E_TMP/bad.json"
expect_rc 1 "bad facts snapshot: 1" -- P drift --repo "$S/repo" --facts "$E2E_TMP/bad.json" --no-bmc
expect_rc 1 "unknown --limit term: 1" -- P plan --repo "$S/repo" --facts "$S/facts.json" "${RO[@]}" --limit 'nosuch*'

# diff between two commits.
cp "$U/repo/stacks/bench.yaml" "$S/repo/stacks/bench.yaml"
git -C "$S/repo" commit -qam upgrade
expect_rc 2 "diff --detailed-exitcode with changes: 2" -- P diff --repo "$S/repo" HEAD~1 HEAD --detailed-exitcode --format markdown
expect_grep '^#### `gpu\[00001-00008\] \(8 nodes\)` \[reboot\]' "$E2E_OUT" "markdown collapses identical nodes, with their disruption"
expect_grep '^\| ~ \| `nvidia.driver` \| `535.161.08` \| `550.90.07` \| reboot \| `stacks/bench.yaml:4:13` \|$' "$E2E_OUT" "markdown row with the disruption and the pin's location"
expect_grep '^\| drain \+ reboot \| `gpu\[00001-00008\] \(8 nodes\)` \|$' "$E2E_OUT" "markdown disruption summary"
expect_rc 0 "diff in text" -- P diff --repo "$S/repo" HEAD~1 HEAD
expect_grep '^~ gpu\[00001-00008\] \(8 nodes\)  \[reboot\]$' "$E2E_OUT" "text: each node group with its disruption"
expect_grep '^  drain \+ reboot     gpu\[00001-00008\] \(8 nodes\)$' "$E2E_OUT" "text: the disruption summary"
expect_rc 0 "diff of a commit with itself: 0" -- P diff --repo "$S/repo" HEAD HEAD --detailed-exitcode
# Output files: written whole or not at all. A report goes to a private temp file renamed over
# the target (mode as any new file: umask), and a directory that cannot be written is an error
# that leaves nothing behind.
( umask 022; P drift --repo "$U/repo" --facts "$U/facts.json" --no-bmc --format junit --out "$E2E_TMP/mode.xml" >/dev/null 2>&1 )
[[ $(stat -c %a "$E2E_TMP/mode.xml") == 644 ]] && pass "--out file gets the umask's mode (644)" \
  || fail "--out file mode is $(stat -c %a "$E2E_TMP/mode.xml"), not 644"
mkdir -p "$E2E_TMP/ro" && chmod 555 "$E2E_TMP/ro"
if [[ $(id -u) -eq 0 ]] && touch "$E2E_TMP/ro/probe" 2>/dev/null; then
  rm -f "$E2E_TMP/ro/probe"
  chattr +i "$E2E_TMP/ro" 2>/dev/null || true   # root ignores modes; an immutable dir it cannot
fi
if touch "$E2E_TMP/ro/probe" 2>/dev/null; then
  rm -f "$E2E_TMP/ro/probe"
  pass "(unwritable-directory check skipped: this filesystem lets us write anyway)"
else
  expect_rc 1 "drift --out into an unwritable directory: 1" -- P drift --repo "$U/repo" \
    --facts "$U/facts.json" --no-bmc --format json --out "$E2E_TMP/ro/d.json"
  expect_grep "output.write|cannot create a temp file" "$E2E_ERR" "the error names the output"
  [[ -z $(ls -A "$E2E_TMP/ro") ]] && pass "nothing left in the directory" || fail "left: $(ls -A "$E2E_TMP/ro")"
fi
chattr -i "$E2E_TMP/ro" 2>/dev/null || true
chmod 755 "$E2E_TMP/ro"
if [[ -w /dev/full ]]; then
  expect_rc 1 "drift --format json to a full stdout (/dev/full): 1, not 2" -- \
    bash -c "'$PLUMB' drift --repo '$U/repo' --facts '$U/facts.json' --no-bmc --format json >/dev/full"
fi

finish
