#!/usr/bin/env bash
# Gathered facts agree with the testbed's state files, for every in-band module, on 8 nodes made
# different from each other first (driver, kernel, CUDA, OFED, IB port state, sysctl, a service,
# a module parameter, a marker), so no check can pass by reading a default.
# Also: a probe that hangs past command_timeout is killed on the node and reported as a timeout.
. "$(dirname "$0")/lib/gather.sh"
export TB_DOWNTIME=1
gt_up 8
st() { "$TB" state "$@" >/dev/null; }
st n2 driver=550.90.07 fabricmanager=550.90.07
st n3 kernel=5.15.0-119-generic
st n4 ofed=24.07-0.6.1.0
st n5 ib_rate=200 ib_count=4 ib_state_2=Down ib_fw_1=28.40.1000
st n6 persistence_mode=Disabled gpu_count=4
# sysctl and services: their state files, edited in place.
sed -i 's/^vm.swappiness = .*/vm.swappiness = 10/' "$TB_RUN/nodes/n7/state/sysctl.conf"
sed -i 's/^nvidia-persistenced .*/nvidia-persistenced disabled inactive/' "$TB_RUN/nodes/n7/state/services"
# The CUDA toolkit files and /sys/module are laid down at boot: change the state, then reboot.
st n4 cuda=12.4.1
sed -i 's/^nvidia NVreg_EnableStreamMemOPs .*/nvidia NVreg_EnableStreamMemOPs 1/' "$TB_RUN/nodes/n8/state/modparams"
"$TB" ctl reboot n4
"$TB" ctl reboot n8
sleep 0.5
"$TB" ctl wait-up n4 >/dev/null
"$TB" ctl wait-up n8 >/dev/null
commit=$(git -C "$REPO" rev-parse HEAD)
"$TB" ssh n8 "mkdir -p /var/lib/plumb && printf '%s\n' '{\"commit\":\"$commit\",\"run\":\"run-42\",\"time\":\"2026-11-29T23:00:00Z\"}' >/var/lib/plumb/marker.json"

gather --format json
check "all 8 nodes read (exit 0)" test "$RC" = 0
check "no module reported an error" py 'j["summary"]["module_errors"] == 0 and not any("errors" in n for n in j["nodes"].values())'
[[ $RC == 0 ]] || head -c 2000 "$ERR"

# One comparison per module and node, against the node's state files. Prints "ok"/"FAIL" lines.
# The in-band modules are the registry's (plumb modules), not a list of this test's own.
"$PLUMB" modules --format json >"$GT_TMP/modules.json"
python3 - "$OUT" "$TB_RUN/nodes" "$commit" "$GT_TMP/modules.json" <<'PY' >"$GT_TMP/facts-checks"
import json, os, sys
j = json.load(open(sys.argv[1]))
nodes_dir, commit = sys.argv[2], sys.argv[3]
# On-demand health checks (dcgm, nccl_bw) load the GPUs: gather never runs them.
in_band = {m["name"] for m in json.load(open(sys.argv[4])) if m["channel"] == "ssh" and not m["on_demand"]}

def conf(node, name="current.conf"):
    out = {}
    for line in open(os.path.join(nodes_dir, node, "state", name)):
        if "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            out[k] = v
    return out

def rows(node, name):
    return [l.split() for l in open(os.path.join(nodes_dir, node, "state", name)) if l.strip()]

def check(node, module, cond, what):
    print(("ok   " if cond else "FAIL ") + f"{node} {module}: {what}")

for node, obs in sorted(j["nodes"].items()):
    f = obs.get("facts", {})
    c = conf(node)
    missing = in_band - set(f)
    check(node, "all", not missing, f"every in-band module has facts (missing: {sorted(missing)})")
    if missing:
        continue
    boots = [l for l in open(os.path.join(nodes_dir, node, "state", "events.log")) if " boot id=" in l]
    boot_id = boots[-1].split("boot id=")[1].split()[0] if boots else None
    check(node, "kernel", f["kernel"]["release"] == c["kernel"], f"release {f['kernel']['release']} == {c['kernel']}")
    check(node, "kernel", f["kernel"]["boot_id"] == boot_id, "boot_id is the one events.log recorded at boot")
    check(node, "os", (f["os"]["id"], f["os"]["version_id"], f["os"]["pretty_name"]) ==
          (c["os_id"], c["os_version_id"], c["os_pretty_name"]), "id, version_id, pretty_name")
    nd = f["nvidia_driver"]
    gpus = nd["gpus"]
    check(node, "nvidia_driver", nd["installed_version"] == c["driver"], f"driver {nd['installed_version']} == {c['driver']}")
    check(node, "nvidia_driver", len(gpus) == int(c["gpu_count"]), f"{len(gpus)} GPUs == {c['gpu_count']}")
    check(node, "nvidia_driver", all(g["name"] == c["gpu_name"] and g["driver_version"] == c["driver"] for g in gpus), "every GPU's name and driver")
    check(node, "nvidia_driver", all(g["persistence_mode"] == (c["persistence_mode"] == "Enabled") for g in gpus), f"persistence mode {c['persistence_mode']}")
    check(node, "nvidia_driver", nd["fabricmanager"]["version"] == c["fabricmanager"], "fabric manager version")
    svc = {r[0]: r[1:] for r in rows(node, "services")}
    check(node, "nvidia_driver", nd["fabricmanager"]["service"]["active"] == svc["nvidia-fabricmanager"][1], "fabric manager service state")
    check(node, "cuda", f["cuda"]["version"] == c["cuda"], f"cuda {f['cuda']['version']} == {c['cuda']}")
    pk = {r[0]: r[1] for r in rows(node, "packages")}
    check(node, "nccl", f["nccl"]["version"] == pk.get("libnccl2"), "nccl == libnccl2 package version")
    check(node, "ofed", f["ofed"]["version"] == c["ofed"], f"ofed {f['ofed']['version']} == {c['ofed']}")
    got = {k: v["version"] for k, v in f["packages"]["packages"].items()}
    check(node, "packages", got == pk, f"all {len(pk)} packages with exact versions")
    sc = {}
    for line in open(os.path.join(nodes_dir, node, "state", "sysctl.conf")):
        if " = " in line:
            k, v = line.rstrip("\n").split(" = ", 1)
            sc[k] = v
    vals = f["sysctl"]["values"]
    check(node, "sysctl", all(vals.get(k) == v for k, v in sc.items()), f"all {len(sc)} keys of sysctl.conf")
    units = f["services"]["units"]
    check(node, "services", all(units.get(n + ".service", units.get(n, {})).get("enabled") == s[0] and
                                units.get(n + ".service", units.get(n, {})).get("active") == s[1]
                                for n, s in svc.items()), f"enabled/active of all {len(svc)} services")
    mp = {}
    for r in rows(node, "modparams"):
        mp.setdefault(r[0], {})[r[1]] = " ".join(r[2:])
    check(node, "kernel_modules", f["kernel_modules"]["modules"] == mp, "every module parameter")
    ports = f["infiniband"]["ports"]
    check(node, "infiniband", len(ports) == int(c["ib_count"]), f"{len(ports)} ports == {c['ib_count']}")
    def port_ok(p):
        i = int(p["ca"].split("_")[1])
        state = c.get(f"ib_state_{i}", c["ib_state"])
        rate = 10 if state == "Down" else float(c.get(f"ib_rate_{i}", c["ib_rate"]))  # a Down port reports 10
        return (p["state"] == state and p["rate_gbps"] == rate and p["ca_type"] == c["ib_ca_type"] and
                p["firmware"] == c.get(f"ib_fw_{i}", c["ib_fw"]))
    check(node, "infiniband", all(port_ok(p) for p in ports), "every port's state, rate, firmware, CA type")
    mk = f["marker"]
    if node == "n8":
        check(node, "marker", mk["present"] and mk["commit"] == commit and mk["run"] == "run-42", "the marker's commit and run")
    else:
        check(node, "marker", mk["present"] is False, "no marker")
PY
cat "$GT_TMP/facts-checks"
check "every facts comparison holds ($(grep -c '^ok' "$GT_TMP/facts-checks") checks)" \
  bash -c "! grep -q '^FAIL' '$GT_TMP/facts-checks' && grep -q '^ok' '$GT_TMP/facts-checks'"
check "the nodes really differ (5 driver/kernel/cuda variants seen)" py \
  'len({(n["facts"]["nvidia_driver"]["installed_version"], n["facts"]["kernel"]["release"], n["facts"]["cuda"]["version"]) for n in j["nodes"].values()}) >= 4'
check "each node has a facts digest" py 'all(n["facts_digest"].startswith("sha256:") for n in j["nodes"].values())'
check "n1 and n2 differ, so do their digests" py 'j["nodes"]["n1"]["facts_digest"] != j["nodes"]["n2"]["facts_digest"]'

# The digest is stable: a second gather of unchanged nodes gives the same digests (boot ids too).
cp "$OUT" "$GT_TMP/first.json"
gather --format json
check "facts digests are stable across gathers" python3 -c "
import json, sys
a = json.load(open('$GT_TMP/first.json'))['nodes']; b = json.load(open('$OUT'))['nodes']
sys.exit(0 if all(a[n]['facts_digest'] == b[n]['facts_digest'] for n in a) else 1)"

# A probe that hangs: shadow cat on n3 (first in PATH) with one that never returns. cat, because
# the probe runs it bare (plumb_cat): a tool under the probe's own `timeout 20` would end by that
# and make a module error, not a timeout. The command timeout is generous for the nodes that
# answer and short next to the hang, so a gather that took less than the hang was cut by it.
# Generous means a loaded 2-core CI machine: a whole gather of these 8 nodes took ~30 s there
# beside two CPU hogs, and a 20 s timeout timed 7 of them out.
"$TB" ssh n3 "printf '#!/bin/sh\nexec sleep 7321\n' >/usr/local/bin/cat && chmod +x /usr/local/bin/cat"
sed -i 's/command_timeout: [0-9a-z]*/command_timeout: 90s/' "$REPO/inventory.yaml"
gt_commit "command timeout"
start=$SECONDS
gather --format json
took=$((SECONDS - start))
check "a hung probe makes a partial gather (exit 3)" test "$RC" = 3
check "... n3 is a timeout" py 'j["nodes"]["n3"]["error"]["code"] == "ssh.timeout"'
check "... the others are read" py 'sum(n["reachable"] for n in j["nodes"].values()) == 7'
py 'sum(n["reachable"] for n in j["nodes"].values()) == 7' ||
  python3 -c "import json,sys; [print('  ', k, v.get('error')) for k, v in json.load(open(sys.argv[1]))['nodes'].items() if not v['reachable']]" "$OUT"
check "... cut by the command timeout, not waited out (${took}s, the hang is 7321 s)" test "$took" -lt 240
# The probe script's shell and its process group are killed a second after plumb gives up, the
# hung cat with them.
killed=no
for _ in $(seq 1 60); do
  if ! "$TB" ssh n3 'ps -eo args' | grep -q -e 'plumb probe' -e 'sleep 7321'; then killed=yes; break; fi
  sleep 0.5
done
check "... and the hung probe was killed on the node" test "$killed" = yes
gt_finish
