#!/usr/bin/env python3
"""Synthetic cluster for the plan/drift benchmark: N nodes, ~40 pinned keys each, recorded facts.

usage: gen.py --nodes N --template SNAPSHOT.json --out DIR

SNAPSHOT is a real `plumb gather --facts-out` snapshot (bench/plan/template-facts.json was
recorded from a testbed node). Every synthetic node gets a copy of the template node's facts,
so every module parses and diffs real shapes. DIR gets:
  repo/       a git cluster repo: inventory.yaml (N nodes, racks of 8, NVLink domains of 4),
              stacks/bench.yaml pinning the template's own values (kernel, driver, CUDA, OFED,
              every package, every sysctl, every service: ~40 keys) except an upgrade of the
              driver + fabric manager (so every node has a reboot to plan), rollouts/rolling.yaml
  facts.json  the snapshot for --facts; 2% of the nodes have vm.swappiness changed by hand.
"""
import argparse
import copy
import json
import os
import re
import subprocess

SAFE = re.compile(r"^[A-Za-z0-9._:+~-]+$")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--template", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--no-upgrade", action="store_true",
                    help="pin the template's own driver: no change unless drifted")
    ap.add_argument("--drift-every", type=int, default=50,
                    help="every K-th node has vm.swappiness changed by hand (0: none)")
    ap.add_argument("--marker", action="store_true",
                    help="every node's marker names the repo's commit (changes become repairs)")
    ap.add_argument("--unreadable", default="", help="comma list of nodes that could not be read")
    ap.add_argument("--one-line", action="store_true",
                    help="write the snapshot as one line of JSON instead of plumb's layout")
    a = ap.parse_args()
    snap = json.load(open(a.template))
    name0, tnode = sorted(snap["nodes"].items())[0]
    f = tnode["facts"]

    stack = {}
    stack["kernel"] = f["kernel"]["release"]
    drv = f["nvidia_driver"]
    stack["nvidia"] = {"driver": "550.90.07", "fabricmanager": "550.90.07"}
    if a.no_upgrade:
        stack["nvidia"] = {"driver": drv["installed_version"], "fabricmanager": drv["fabricmanager"]["version"]}
    if f.get("cuda", {}).get("version"):
        stack["nvidia"]["cuda"] = f["cuda"]["version"]
    if f.get("ofed", {}).get("version"):
        stack["ofed"] = f["ofed"]["version"]
    stack["packages"] = {k: v["version"] for k, v in sorted(f["packages"]["packages"].items())
                         if SAFE.match(k) and SAFE.match(v["version"]) and "nvidia-driver" not in k
                         and "fabricmanager" not in k and "cuda-drivers" not in k and "nscq" not in k}
    stack["sysctl"] = {k: int(v) if v.isdigit() else v for k, v in sorted(f["sysctl"]["values"].items())
                       if SAFE.match(k) and SAFE.match(v)}
    units = f.get("services", {}).get("units", {})
    stack["services"] = {u.removesuffix(".service"): {"enabled": s["enabled"] == "enabled",
                                                      "active": s["active"] == "active"}
                         for u, s in sorted(units.items()) if s.get("enabled") in ("enabled", "disabled")}
    # Eight more pinned packages (present in every node's facts too) bring the pins to ~40.
    extra = {"bench-tool-%d" % k: "1.%d.0-1" % k for k in range(8)}
    stack["packages"].update(extra)
    for k, v in extra.items():
        f["packages"]["packages"][k] = {"version": v, "held": False}
    mods = f.get("kernel_modules", {}).get("modules", {})
    km = {m: {p: v for p, v in sorted(ps.items()) if SAFE.match(p) and SAFE.match(v)}
          for m, ps in sorted(mods.items())}
    km = {m: ps for m, ps in km.items() if ps}
    if km:
        stack["kernel_modules"] = km
    keys = 0
    for v in stack.values():
        keys += sum(len(x) if isinstance(x, dict) else 1 for x in v.values()) if isinstance(v, dict) else 1

    repo = os.path.join(a.out, "repo")
    os.makedirs(os.path.join(repo, "stacks"), exist_ok=True)
    os.makedirs(os.path.join(repo, "rollouts"), exist_ok=True)
    names = ["gpu%05d" % i for i in range(1, a.nodes + 1)]
    with open(os.path.join(repo, "inventory.yaml"), "w") as out:
        out.write("cluster: bench\ndefaults:\n  ssh: { user: root, known_hosts: known_hosts }\nnodes:\n")
        for i, n in enumerate(names):
            out.write("  - { name: %s, address: %s.bench.example, rack: r%04d, nvlink_domain: nvl%05d, groups: [gpu] }\n"
                      % (n, n, i // 8 + 1, i // 4 + 1))
        out.write("groups:\n  gpu: { stack: bench, rollout: rolling }\n")
    with open(os.path.join(repo, "stacks", "bench.yaml"), "w") as out:
        json.dump(stack, out, indent=1)   # JSON is YAML
        out.write("\n")
    with open(os.path.join(repo, "rollouts", "rolling.yaml"), "w") as out:
        out.write("drain: { scheduler: none, timeout: 1h }\nmax_unavailable: 5%\n"
                  "failure_domain: { by: nvlink_domain, mode: aligned, at_once: 8 }\ncanary: 4\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@bench.example",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@bench.example")
    subprocess.run(["git", "init", "-q", repo], check=True, env=env)
    subprocess.run(["git", "-C", repo, "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", repo, "commit", "-qm", "bench"], check=True, env=env)
    commit = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], check=True, env=env,
                            capture_output=True, text=True).stdout.strip()

    nodes = {}
    for i, n in enumerate(names):
        node = copy.deepcopy(tnode)
        if a.drift_every and i % a.drift_every == a.drift_every - 1 and "vm.swappiness" in node["facts"]["sysctl"]["values"]:
            node["facts"]["sysctl"]["values"]["vm.swappiness"] = "1"
        node["facts_digest"] = "sha256:%064x" % i
        if a.marker:
            node["facts"]["marker"] = {"present": True, "commit": commit, "run": "run-1",
                                       "time": "2026-11-29T00:00:00Z"}
        if n in a.unreadable.split(","):
            node = {"reachable": False, "error": {"severity": "error", "code": "ssh.timeout",
                                                  "message": "connect timed out after 10s"},
                    "facts": {}, "facts_digest": ""}
        nodes[n] = node
    snap_out = {k: v for k, v in snap.items() if k != "nodes"}
    snap_out["nodes"] = nodes
    with open(os.path.join(a.out, "facts.json"), "w") as out:
        if a.one_line:
            json.dump(snap_out, out, separators=(",", ":"))
        else:
            # The layout `plumb gather --facts-out` writes: top-level keys sorted, one per line,
            # one line per node (plumb parses such a file on several threads).
            out.write("{\n")
            top = sorted(snap_out)
            for i, k in enumerate(top):
                sep = ",\n" if i + 1 < len(top) else "\n"
                if k != "nodes":
                    out.write(json.dumps(k) + ": " + json.dumps(snap_out[k], separators=(",", ":")) + sep)
                    continue
                out.write('"nodes": {')
                for j, (name, node) in enumerate(sorted(nodes.items())):
                    out.write(("\n  " if j == 0 else ",\n  ") + json.dumps(name) + ": " +
                              json.dumps(node, separators=(",", ":"), sort_keys=True))
                out.write(("\n}" if nodes else "}") + sep)
            out.write("}\n")
    print("nodes=%d keys_per_node=%d repo=%s facts=%s (%.1f MB)" % (
        a.nodes, keys, repo, os.path.join(a.out, "facts.json"),
        os.path.getsize(os.path.join(a.out, "facts.json")) / 1e6))


if __name__ == "__main__":
    main()
