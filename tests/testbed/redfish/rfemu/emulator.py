"""The emulator process: many BMCs (one HTTPS listener each) plus a plain-HTTP control API on
127.0.0.1, all in one asyncio event loop."""

import asyncio
import json
import os
import resource
import ssl
import sys
import time

from . import control
from .bmc import Bmc
from .http import serve_connection

MAX_BODY = 512 * 1024 * 1024


class Emulator:
    def __init__(self, config):
        self.config = config
        self.bmcs = {}
        self.servers = {}      # name -> asyncio Server
        self.conns = {}        # name -> set of writers
        self.contexts = {}
        self.node_ctl_cmd = config.get("node_ctl") or []
        self.node_ctl_env = config.get("node_ctl_env") or {}
        self.started = time.time()
        log = config.get("request_log")
        # Line-buffered: a request's line is in the file before its answer leaves, so a test
        # may read the log as soon as its client returns.
        self.req_log = open(log, "a", buffering=1) if log else None
        self.loop = None
        for b in config["bmcs"]:
            bmc = Bmc(dict(config.get("defaults", {}), **b), self)
            if bmc.name in self.bmcs:
                raise ValueError("duplicate BMC name %r" % bmc.name)
            self.bmcs[bmc.name] = bmc

    # ----- logging ------------------------------------------------------------------------
    def warn(self, text):
        sys.stderr.write("rfemu: %s\n" % text)
        sys.stderr.flush()

    def log_request(self, bmc, e):
        # Method, path and status only: never headers or bodies (credentials live there).
        if self.req_log:
            self.req_log.write("%.3f %s %s %s %d auth=%s if-match=%d\n" % (
                e["t"], bmc.name, e["method"], e["path"], e["status"], e["auth"], e["if_match"]))

    # ----- TLS ----------------------------------------------------------------------------
    def context(self, mode):
        if mode in self.contexts:
            return self.contexts[mode]
        tls = self.config.get("tls")
        if not tls:
            self.contexts[mode] = None
            return None
        pair = tls.get(mode)
        if not pair:
            raise ValueError("no TLS material for mode %r" % mode)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(pair["cert"], pair["key"])
        ctx.set_alpn_protocols(["http/1.1"])
        self.contexts[mode] = ctx
        return ctx

    # ----- listeners ----------------------------------------------------------------------
    async def start_bmc(self, bmc):
        conns = self.conns.setdefault(bmc.name, set())

        async def on_conn(reader, writer):
            await serve_connection(reader, writer, bmc.handle, MAX_BODY, conns)

        self.servers[bmc.name] = await asyncio.start_server(
            on_conn, bmc.address, bmc.port, ssl=self.context(bmc.tls), backlog=256,
            reuse_address=True, limit=256 * 1024)

    async def bmc_down(self, bmc, seconds):
        """A BMC reboot: the listener closes (connections refused), live connections drop,
        sessions are lost; after `seconds` it listens again."""
        srv = self.servers.pop(bmc.name, None)
        if srv:
            srv.close()
        for w in list(self.conns.get(bmc.name, ())):
            w.transport.abort()
        bmc.sessions.clear()
        await asyncio.sleep(seconds)
        for _ in range(50):
            try:
                await self.start_bmc(bmc)
                return
            except OSError:
                await asyncio.sleep(0.1)
        self.warn("%s: could not listen again after reboot" % bmc.name)

    # ----- the linked testbed node --------------------------------------------------------
    async def node_ctl(self, bmc, action, settled=None):
        """Asks the testbed to do `action` (poweroff | poweron | reboot) to the BMC's node, after
        every node action asked for before it (the BMC's node lock: two actions never race to
        the node, so the last one asked for is the one the node ends in). With `settled`, the
        action ends only once settled() says the node shows it (or node_settle_seconds pass:
        then it is logged, and PowerState shows the node as it is). Returns settled()."""
        if not bmc.node or not self.node_ctl_cmd:
            return False
        async with bmc.node_lock:
            if action in bmc.node_hold:   # fault hold_node: wait until the test lets it go
                bmc.node_waiting.append(action)
                try:
                    while action in bmc.node_hold:
                        await asyncio.sleep(0.05)
                finally:
                    bmc.node_waiting.remove(action)
            cmd = list(self.node_ctl_cmd) + [action, bmc.node]
            env = dict(os.environ, **self.node_ctl_env)
            try:
                proc = await asyncio.create_subprocess_exec(
                    *cmd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT, env=env)
                out, _ = await asyncio.wait_for(proc.communicate(), 60)
                rc = proc.returncode
            except (OSError, asyncio.TimeoutError) as e:
                out, rc = str(e).encode(), -1
            event = {"t": round(time.time(), 3), "action": action, "rc": rc}
            if rc != 0:
                self.warn("%s: node ctl %s %s failed (rc %s): %s" % (
                    bmc.name, action, bmc.node, rc, out.decode("utf-8", "replace").strip()[-300:]))
            ok = rc == 0
            if settled is not None:
                end = time.time() + float(bmc.p["node_settle_seconds"])
                while ok and not settled() and time.time() < end:
                    await asyncio.sleep(0.05)
                ok = ok and settled()
                event["settled"] = ok
                if rc == 0 and not ok:
                    self.warn("%s: node %s does not show %s after %ss" % (
                        bmc.name, bmc.node, action, bmc.p["node_settle_seconds"]))
            bmc.node_events.append(event)
            return ok

    # ----- main ---------------------------------------------------------------------------
    async def run(self, ready_file=None):
        self.loop = asyncio.get_running_loop()
        for bmc in self.bmcs.values():
            await self.start_bmc(bmc)
        ctl = self.config.get("control") or {}
        ctl_server = None
        if ctl.get("port") is not None:
            ctl_server = await control.start(self, ctl.get("address", "127.0.0.1"), int(ctl["port"]))
            port = ctl_server.sockets[0].getsockname()[1]
            self.control_port = port
        self.warn("serving %d BMCs (startup %.2fs)" % (len(self.bmcs), time.time() - self.started))
        if ready_file:
            tmp = ready_file + ".tmp"
            with open(tmp, "w") as f:
                json.dump({"pid": os.getpid(), "control_port": getattr(self, "control_port", None)}, f)
            os.replace(tmp, ready_file)
        await asyncio.Event().wait()


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
