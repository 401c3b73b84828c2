#!/usr/bin/env python3
"""Helper of the `bmc` script: writes the emulator config, and talks to the control API.

  bmcctl.py gen RUN [--count N | --nodes FILE] [--vendor V] [--net A.B] [--port P]
                    [--ports BASE] [--user U] [--password-file F] [--tls MODE]
                    [--option K=V]... [--node-ctl CMD] [--vendor-of NAME=V]...
                    [--tls-of NAME=MODE]... [--option-of NAME:K=V]...
  bmcctl.py ctl RUN METHOD PATH [JSON]      raw control call, prints the JSON answer
"""

import argparse
import json
import os
import secrets
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rfemu import profiles  # noqa: E402

VENDOR_CYCLE = ["dmtf", "ilo", "openbmc"]


def tb_addr(net, i):
    """Same map as the testbed's node addresses (127.10.(i/250).(i%250+1)), on another /16."""
    return "%s.%d.%d" % (net, i // 250, i % 250 + 1)


def vendor_arg(v):
    """A vendor mode the emulator knows (profiles.py), or "mixed"."""
    if v != "mixed":
        try:
            profiles.profile(v)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e))
    return v


def parse_value(v):
    try:
        return json.loads(v)
    except ValueError:
        return v


def gen(args):
    run = args.run
    os.makedirs(run, exist_ok=True)
    nodes = []
    if args.nodes:
        with open(args.nodes) as f:
            for line in f:
                fields = line.split()
                if fields and not fields[0].startswith("#"):
                    nodes.append((fields[0], fields[1] if len(fields) > 1 else None))
    else:
        nodes = [("n%d" % i, None) for i in range(1, args.count + 1)]
    if args.password_file:
        with open(args.password_file) as f:
            cred = f.read().strip()
        user, _, password = cred.partition(":") if ":" in cred else (args.user, "", cred)
    else:
        user, password = args.user, secrets.token_urlsafe(18)
    cred_path = os.path.join(run, "credentials")
    fd = os.open(cred_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("%s:%s\n" % (user, password))
    options = {}
    for o in args.option or []:
        k, _, v = o.partition("=")
        options[k] = parse_value(v)
    option_of = {}
    for o in args.option_of or []:
        node, _, kv = o.partition(":")
        k, _, v = kv.partition("=")
        option_of.setdefault(node, {})[k] = parse_value(v)
    vendor_of = dict(x.split("=", 1) for x in args.vendor_of or [])
    tls_of = dict(x.split("=", 1) for x in args.tls_of or [])
    certs = os.path.join(run, "certs")
    bmcs = []
    for i, (node, node_addr) in enumerate(nodes, start=1):
        if args.ports:
            address, port = "127.0.0.1", args.ports + i - 1
        elif node_addr and node_addr.startswith("127."):
            o = node_addr.split(".")
            address, port = "%s.%s.%s" % (args.net, o[2], o[3]), args.port
        else:
            address, port = tb_addr(args.net, i), args.port
        vendor = vendor_of.get(node) or (VENDOR_CYCLE[(i - 1) % 3] if args.vendor == "mixed" else args.vendor)
        b = {"name": node, "address": address, "port": port, "vendor": vendor,
             "username": user, "password": password, "tls": tls_of.get(node, args.tls)}
        if args.nodes:
            b["node"] = node
            if args.node_status_dir:
                b["node_status"] = os.path.join(args.node_status_dir, node, "ctl", "status")
                b["node_boot_id"] = os.path.join(args.node_status_dir, node, "ctl", "boot_id")
        if options or node in option_of:
            b["options"] = dict(options, **option_of.get(node, {}))
        bmcs.append(b)
    tls = {"good": {"cert": certs + "/server.pem", "key": certs + "/server.key"},
           "wrong-ca": {"cert": certs + "/wrong.pem", "key": certs + "/wrong.key"},
           "wrong-name": {"cert": certs + "/wrong-name.pem", "key": certs + "/wrong-name.key"},
           "self-signed": {"cert": certs + "/self-signed.pem", "key": certs + "/self-signed.key"}}
    config = {"bmcs": bmcs, "tls": tls,
              "control": {"address": "127.0.0.1", "port": args.control_port},
              "request_log": os.path.join(run, "requests.log")}
    if args.node_ctl:
        config["node_ctl"] = args.node_ctl.split()
    path = os.path.join(run, "config.json")
    fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(config, f, indent=1)
    os.replace(path + ".tmp", path)
    # bmcs.txt: "name url vendor node" for tests and clients (no secrets).
    with open(os.path.join(run, "bmcs.txt"), "w") as f:
        for b in bmcs:
            host = b["address"]
            f.write("%s https://%s:%d %s %s\n" % (b["name"], host, b["port"], b["vendor"], b.get("node") or "-"))
    for b in bmcs:
        print(b["address"])
    return 0


def ctl(args):
    try:
        with open(os.path.join(args.run, "ready.json")) as f:
            port = json.load(f)["control_port"]
    except (OSError, ValueError, KeyError):
        sys.stderr.write("bmcctl: no running emulator in %s (no ready.json)\n" % args.run)
        return 2
    url = "http://127.0.0.1:%d/%s" % (port, args.path.lstrip("/"))
    data = args.json.encode() if args.json is not None else None
    req = urllib.request.Request(url, data=data, method=args.method.upper(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            sys.stdout.write(r.read().decode() + "\n")
            return 0
    except urllib.error.HTTPError as e:
        sys.stdout.write(e.read().decode() + "\n")
        return 1
    except OSError as e:
        sys.stderr.write("bmcctl: control API not reachable: %s\n" % e)
        return 2


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("run")
    g.add_argument("--count", type=int, default=1)
    g.add_argument("--nodes")
    g.add_argument("--vendor", default="dmtf", type=vendor_arg,
                   help="dmtf | ilo | openbmc | neutral:<mockup> | mixed")
    g.add_argument("--vendor-of", action="append")
    g.add_argument("--net", default="127.11")
    g.add_argument("--port", type=int, default=8443)
    g.add_argument("--ports", type=int, default=0)
    g.add_argument("--user", default="admin")
    g.add_argument("--password-file")
    g.add_argument("--tls", default="good", choices=["good", "wrong-ca", "wrong-name", "self-signed"])
    g.add_argument("--tls-of", action="append")
    g.add_argument("--option", action="append")
    g.add_argument("--option-of", action="append", help="NAME:K=V, one BMC's option")
    g.add_argument("--node-ctl")
    g.add_argument("--node-status-dir", help="<dir>/<node>/ctl/status holds each node's power, ctl/boot_id its boot (the testbed's layout)")
    g.add_argument("--control-port", type=int, default=0)
    c = sub.add_parser("ctl")
    c.add_argument("run")
    c.add_argument("method")
    c.add_argument("path")
    c.add_argument("json", nargs="?")
    args = ap.parse_args()
    return gen(args) if args.cmd == "gen" else ctl(args)


if __name__ == "__main__":
    sys.exit(main())
