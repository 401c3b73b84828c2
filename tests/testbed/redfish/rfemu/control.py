"""Plain-HTTP control API on 127.0.0.1 (inside the testbed's netns): read a BMC's state and
request log, inject faults, set power. JSON in and out. See README.md "Control API"."""

import asyncio
import json
import urllib.parse

from .bmc import TASK_FAULTS
from .http import Response, serve_connection
from .power import NODE_ACTIONS

FAULT_KEYS = {"unavailable": int, "retry_after": int, "delay": float, "delay_count": int,
              "drop": int, "precondition": int, "task_fail": int,
              "update_hold": int, "task_critical": int, "task_truncate": int, "monitor_error": int,
              "monitor_error_status": int}


def _json(status, obj):
    return Response(status, json.dumps(obj, indent=1).encode(), [("Content-Type", "application/json")])


def _rss_kib():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _targets(emu, name):
    if name == "*":
        return list(emu.bmcs.values())
    b = emu.bmcs.get(name)
    return [b] if b else []


def set_faults(emu, bmc, spec):
    for k, v in spec.items():
        if k in FAULT_KEYS:
            bmc.faults[k] = FAULT_KEYS[k](v)
        elif k == "session_limit":
            bmc.session_limit = int(v)
        elif k == "expire_sessions":
            if v:
                bmc.sessions.clear()
        elif k == "down":
            asyncio.ensure_future(emu.bmc_down(bmc, float(v)))
        elif k == "hold_node":
            # "poweroff" (a comma list): those node actions wait before reaching the node until
            # hold_node is set again without them ("" lets every one go); a test's way to hold
            # one action while it asks for another (no timing).
            acts = {a for a in str(v).split(",") if a}
            bad = acts - set(NODE_ACTIONS)
            if bad:
                raise ValueError("hold_node: unknown node action %r (one of %s)" % (
                    sorted(bad)[0], ", ".join(NODE_ACTIONS)))
            bmc.node_hold = acts
        else:
            raise ValueError("unknown fault %r" % k)


def clear_faults(bmc):
    bmc.faults.update({"unavailable": 0, "retry_after": 1, "delay": 0.0, "delay_count": 0,
                       "drop": 0, "precondition": 0, "task_fail": 0})
    bmc.faults.update(TASK_FAULTS)
    bmc.session_limit = bmc.p["session_limit"]
    bmc.node_hold = set()


async def handle(emu, req):
    parts = [urllib.parse.unquote(p) for p in req.path.strip("/").split("/") if p]
    q = dict(urllib.parse.parse_qsl(req.query))
    m = req.method
    try:
        body = json.loads(req.body.decode()) if req.body else {}
    except ValueError:
        return _json(400, {"error": "body is not JSON"})
    if parts == ["health"]:
        return _json(200, {"ok": True, "bmcs": len(emu.bmcs)})
    if parts == ["stats"]:
        return _json(200, {"bmcs": len(emu.bmcs), "rss_kib": _rss_kib(),
                           "requests": sum(len(b.log) for b in emu.bmcs.values()),
                           "sessions": sum(b.sessions.count() for b in emu.bmcs.values())})
    if parts == ["bmcs"] and m == "GET":
        for b in emu.bmcs.values():
            b.sync_node()
        return _json(200, [{"name": b.name, "url": b.base_url(), "vendor": b.vendor, "node": b.node,
                            "power": b.power, "sessions": b.sessions.count()}
                           for b in emu.bmcs.values()])
    if len(parts) < 2 or parts[0] != "bmcs":
        return _json(404, {"error": "no such control path"})
    targets = _targets(emu, parts[1])
    if not targets:
        return _json(404, {"error": "no such BMC %r" % parts[1]})
    for b in targets:
        b.sync_node()   # the linked node's boots and power, as a Redfish request would see them
    sub = parts[2] if len(parts) > 2 else ""
    if sub == "" and m == "GET":
        return _json(200, targets[0].state())
    if sub == "sessions" and m == "GET":
        return _json(200, {"sessions": sum(b.sessions.count() for b in targets)})
    if sub == "log" and m == "GET":
        since = int(q.get("since", 0))
        entries = list(targets[0].log)[since:]
        return _json(200, {"entries": entries, "next": since + len(entries)})
    if sub == "log" and m == "DELETE":
        for b in targets:
            b.log.clear()
        return _json(200, {"ok": True})
    if sub == "faults" and m == "POST":
        try:
            for b in targets:
                set_faults(emu, b, body)
        except (ValueError, TypeError) as e:
            return _json(400, {"error": str(e)})
        return _json(200, {"ok": True, "faults": targets[0].faults, "session_limit": targets[0].session_limit})
    if sub == "faults" and m == "DELETE":
        for b in targets:
            clear_faults(b)
        return _json(200, {"ok": True})
    if sub == "power" and m == "POST":
        state = body.get("state")
        if state not in ("On", "Off"):
            return _json(400, {"error": "state must be On or Off"})
        for b in targets:
            if b._linked(b.primary):
                # The node's power button: the node does it, after any node action before it.
                b.start_power(b.primary, "on" if state == "On" else "forceoff")
                continue
            if state == "On" and b.power != "On":
                b.boot()
            b.power = state
            b.bump(b.k_system)
        return _json(200, {"ok": True})
    return _json(405, {"error": "unsupported method or path"})


async def _safe(emu, req):
    try:
        return await handle(emu, req)
    except Exception as e:  # a bad control call must not take the control port down
        emu.warn("control %s %s: %r" % (req.method, req.path, e))
        return _json(500, {"error": repr(e)})


async def start(emu, address, port):
    async def on_conn(reader, writer):
        await serve_connection(reader, writer, lambda req: _safe(emu, req), 1 << 20)
    return await asyncio.start_server(on_conn, address, port, reuse_address=True)
