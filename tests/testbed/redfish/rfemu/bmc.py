"""One emulated BMC: shared read-only mockup data plus this BMC's own state (power, BIOS
current/pending, firmware versions, sessions, tasks, ETags, faults, request log).
redfish-notes.md §14 lists what it models; README.md documents the behaviour."""

import asyncio
import collections
import json
import time
import urllib.parse
import zlib

from . import messages as msg
from . import mockup as mk
from . import profiles
from . import updates
from .http import DROP, Response
from .power import PowerMixin
from .sessions import Sessions
from .system import SystemState
from .update_service import UpdateMixin
from .mockup import child

# Faults of update tasks (README "Faults"), cleared with the others.
TASK_FAULTS = {"update_hold": 0, "task_critical": 0, "task_truncate": 0, "monitor_error": 0,
               "monitor_error_status": 500}

JSON_TYPE = "application/json; charset=utf-8"
PUBLIC = ("/redfish", "/redfish/v1", "/redfish/v1/$metadata", "/redfish/v1/odata")
SYSTEM_WRITABLE = {"AssetTag", "Boot", "IndicatorLED", "LocationIndicatorActive", "HostName"}
_STATIC_CACHE = {}


class Bmc(PowerMixin, UpdateMixin):
    def __init__(self, cfg, emulator):
        self.name = cfg["name"]
        self.address = cfg.get("address", "127.0.0.1")
        self.port = int(cfg.get("port", 8443))
        self.vendor = cfg.get("vendor", "dmtf")
        self.node = cfg.get("node")
        self.tls = cfg.get("tls", "good")
        self.emu = emulator
        self.p = profiles.profile(self.vendor, cfg.get("options"))
        self.m, self.L = mk.load(self.vendor, self.p["mockup"], self.p["case_insensitive"])
        k = self.m.key
        self.k_sessions = k(self.L.sessions) if self.L.sessions else None
        self.k_multipart = k(self.L.multipart) if self.L.multipart else None
        self.k_tasks = k(self.L.tasks) if self.L.tasks else None
        self.k_session_service = k(self.L.session_service) if self.L.session_service else None
        self.public_keys = {k(x) for x in PUBLIC}
        ss = self.m.get(self.L.session_service) or {}
        timeout = self.p["session_timeout"] or ss.get("SessionTimeout") or 1800
        self.sessions = Sessions(cfg.get("username", "admin"), cfg.get("password", ""), timeout)
        self.session_limit = self.p["session_limit"]
        self.salt = "%04X" % (zlib.crc32(self.name.encode()) & 0xFFFF)
        self.gen = 0
        self.etags = {}
        # Systems: power and BIOS, each its own (HPE Cray EX: two per BMC). The first one is the
        # linked testbed node.
        self.systems = [SystemState(self, sl) for sl in self.L.systems]
        self.primary = self.systems[0]
        self.by_system = {s.key: s for s in self.systems}
        self.by_bios = {s.bios_key: s for s in self.systems if s.bios_key}
        self.by_settings = {s.settings_key: s for s in self.systems if s.settings_key}
        self.by_reset = {s.reset_key: s for s in self.systems if s.reset_key}
        # Firmware (FirmwareInventory and SoftwareInventory members)
        self.fw_members = [k(x) for x in self.L.firmware_members]
        self.fw_version = {mk_: self.m.resources[mk_].get("Version") for mk_ in self.fw_members}
        self.fw_staged = {}
        self.fw_shown_old = {}   # key -> (version, until): inventory_lag
        # Tasks
        self.tasks = collections.OrderedDict()    # key -> Task
        self.monitors = {}                        # key -> Task
        self.next_task = 1
        # Faults and logs
        self.faults = {"unavailable": 0, "retry_after": 1, "delay": 0.0, "delay_count": 0,
                       "drop": 0, "precondition": 0, "task_fail": 0}
        self.faults.update(TASK_FAULTS)
        self.log = collections.deque(maxlen=50000)
        self.node_events = []
        self._init_node_link(cfg)   # the linked testbed node's power and boots (power.py)
        for sys_ in self.systems:
            for key in (sys_.key, sys_.bios_key, sys_.settings_key):
                if key:
                    self.bump(key)
        for key in self.fw_members:
            self.bump(key)

    # The first system's state, for callers that know one system (control API, old tests).
    @property
    def power(self):
        return self.primary.power

    @power.setter
    def power(self, value):
        self.primary.power = value

    @property
    def k_system(self):
        return self.primary.key

    # ----- helpers -------------------------------------------------------------------------
    def bump(self, key):
        self.gen += 1
        tag = '"%s%06X"' % (self.salt, self.gen)
        self.etags[key] = ("W/" + tag) if self.p["weak_etags"] else tag

    def base_url(self):
        host = "[%s]" % self.address if ":" in self.address else self.address
        return "https://%s:%d" % (host, self.port)

    def _headers(self, etag=None):
        h = [("Content-Type", JSON_TYPE), ("OData-Version", "4.0"), ("Cache-Control", "no-cache")]
        if etag:
            h.append(("ETag", etag))
        return h

    def _json(self, status, obj, etag=None, extra=()):
        r = Response(status, updates.dumps(obj), self._headers(etag))
        r.headers.extend(extra)
        return r

    def _error(self, status, messages, extra=()):
        return self._json(status, msg.error_body(messages), extra=extra)

    def _static(self, key):
        ck = (id(self.m), self.p["weak_etags"], key)
        hit = _STATIC_CACHE.get(ck)
        if hit is None:
            obj = self.m.resources[key]
            body = updates.dumps(obj)
            etag = obj.get("@odata.etag") if isinstance(obj, dict) else None
            if not etag:
                etag = '"%08X"' % (zlib.crc32(body) & 0xFFFFFFFF)
                if self.p["weak_etags"]:
                    etag = "W/" + etag
            hit = _STATIC_CACHE[ck] = (body, etag)
        return hit

    # ----- rendering of stateful resources ------------------------------------------------
    def render(self, key):
        """(dict, etag) of a resource this BMC owns or the mockup holds; None if absent."""
        sys_ = self.by_system.get(key)
        if sys_:
            return sys_.render_system()
        sys_ = self.by_bios.get(key)
        if sys_:
            return sys_.render_bios()
        sys_ = self.by_settings.get(key)
        if sys_ and sys_.settings_mode == "object":
            return sys_.render_settings()
        if key in self.fw_version:
            d = dict(self.m.resources[key])
            d["Version"] = self.fw_version[key]
            old = self.fw_shown_old.get(key)
            if old and time.time() < old[1]:
                d["Version"] = old[0]
            d["@odata.etag"] = self.etags[key]
            return d, self.etags[key]
        if self.k_sessions and key == self.k_sessions:
            d = dict(self.m.resources.get(key) or {"@odata.id": self.L.sessions,
                                                   "@odata.type": "#SessionCollection.SessionCollection",
                                                   "Name": "Session Collection"})
            d.pop("Oem", None)
            self.sessions.expire_idle()
            d["Members"] = [{"@odata.id": s.link} for s in self.sessions.by_id.values()]
            d["Members@odata.count"] = len(d["Members"])
            return d, None
        if self.k_sessions and key.startswith(self.k_sessions + "/"):
            sid = key[len(self.k_sessions) + 1:]
            s = self.sessions.by_id.get(sid) or next(
                (x for x in self.sessions.by_id.values() if x.id.lower() == sid), None)
            return (s.to_json(), None) if s else None
        if self.k_session_service and key == self.k_session_service:
            d = dict(self.m.resources[key])
            d["SessionTimeout"] = self.sessions.timeout
            return d, None
        if self.k_tasks and key == self.k_tasks:
            d = dict(self.m.resources.get(key) or {})
            d["Members"] = [{"@odata.id": t.link} for t in self.tasks.values()]
            d["Members@odata.count"] = len(d["Members"])
            return d, None
        if key in self.tasks:
            return self.tasks[key].to_json(), None
        if self.k_tasks and key.startswith(self.k_tasks + "/"):
            return None  # the mockup's frozen tasks are not this BMC's
        if key in self.m.resources and key not in self.m.errors:
            return self.m.resources[key], None
        return None

    # ----- request entry point ------------------------------------------------------------
    async def handle(self, req):
        t0 = time.time()
        auth = "none"
        try:
            resp, auth = await self._handle(req)
        except Exception as e:  # a bug in the emulator must not kill the listener
            self.emu.warn("%s: %s %s: internal error %r" % (self.name, req.method, req.path, e))
            resp = self._error(500, msg.message("GeneralError"))
        status = 0 if resp is DROP else resp.status
        entry = {"t": round(t0, 3), "method": req.method, "path": req.target, "status": status,
                 "auth": auth, "if_match": "if-match" in req.headers}
        self.log.append(entry)
        self.emu.log_request(self, entry)
        return resp

    async def _handle(self, req):
        # The linked node's boots and power first: a boot before this request applies what was
        # pending before it (power.py).
        self.sync_node()
        f = self.faults
        if f["drop"] > 0:
            f["drop"] -= 1
            return DROP, "none"
        if f["delay"] > 0:
            # Counted when the request comes, so requests that arrive meanwhile (a client that
            # gave up on this one and goes on) are the next ones, not delayed too.
            delay = f["delay"]
            if f["delay_count"] > 0:
                f["delay_count"] -= 1
                if f["delay_count"] == 0:
                    f["delay"] = 0.0
            await asyncio.sleep(delay)
        if f["unavailable"] > 0:
            f["unavailable"] -= 1
            ra = str(f["retry_after"])
            return self._error(503, msg.message("ServiceTemporarilyUnavailable", ra),
                               extra=[("Retry-After", ra)]), "none"
        path = req.path
        if self.p["redirect_root"] and path == "/redfish/v1" and req.method in ("GET", "HEAD"):
            return Response(301, b"", [("Location", "/redfish/v1/")]), "none"
        key = self.m.key(path)
        if key == self.m.key("/redfish") and req.method in ("GET", "HEAD"):
            return self._json(200, {"v1": "/redfish/v1/"}), "none"
        is_login = key == self.k_sessions and req.method == "POST"
        public = req.method in ("GET", "HEAD") and key in self.public_keys
        auth = self._auth(req)
        if auth == "bad" and not is_login and not public:
            return self._error(401, msg.message("NoValidSession"),
                               extra=[("WWW-Authenticate", 'Basic realm="Redfish"')]), auth
        if auth == "none" and not is_login and not public:
            return self._error(401, msg.message("NoValidSession"),
                               extra=[("WWW-Authenticate", 'Basic realm="Redfish"')]), auth
        m = req.method
        if m in ("GET", "HEAD"):
            return self._get(req, key), auth
        if m == "POST":
            return await self._post(req, key), auth
        if m == "PATCH":
            return self._patch(req, key), auth
        if m == "DELETE":
            return self._delete(req, key), auth
        return self._error(405, msg.message("OperationNotAllowed")), auth

    def _auth(self, req):
        """none | basic | session | bad (credentials present but not valid)."""
        tok = req.headers.get("x-auth-token")
        if tok is not None:
            return "session" if self.sessions.lookup(tok) else "bad"
        a = req.headers.get("authorization")
        if a is not None:
            return "basic" if a[:6].lower() == "basic " and self.sessions.check_basic(a) else "bad"
        return "none"

    # ----- GET ----------------------------------------------------------------------------
    def _get(self, req, key):
        if key == self.m.key("/redfish/v1/$metadata") and self.m.metadata is not None:
            return Response(200, self.m.metadata, [("Content-Type", "application/xml"),
                                                   ("OData-Version", "4.0")])
        if key in self.monitors:
            return self._monitor(self.monitors[key])
        if key in self.tasks and self.tasks[key].truncate and self.tasks[key].state in updates.TERMINAL:
            return self._cut_short(self.tasks[key].to_json())
        if key in self.by_settings and self.by_settings[key].settings_mode == "patch-only":
            # AMI's Bios/SD takes PATCH only.
            return self._error(405, msg.message("OperationNotAllowed"), extra=[("Allow", "PATCH")])
        q = dict(urllib.parse.parse_qsl(req.query, keep_blank_values=True)) if req.query else {}
        got = self.render(key)
        if got is None:
            if key in self.m.errors:
                return self._json(404, self.m.resources[key])
            return self._error(404, msg.message("ResourceMissingAtURI", req.path))
        obj, etag = got
        if isinstance(obj, dict) and isinstance(obj.get("Members"), list):
            out = self._collection(obj, q, req.path)
            if isinstance(out, Response):
                return out
            return self._content_etag(out, etag)
        if "$expand" in q:
            bad = self._check_expand(q["$expand"])
            if bad:
                return bad
        if obj is self.m.resources.get(key):
            body, etag = self._static(key)
            return Response(200, body, self._headers(etag))
        return self._content_etag(obj, etag)

    def _content_etag(self, obj, etag):
        """200 with the resource's own ETag, or one derived from the content (collections,
        sessions, tasks: it changes whenever what they list changes)."""
        body = updates.dumps(obj)
        if etag is None:
            etag = '"%08X"' % (zlib.crc32(body) & 0xFFFFFFFF)
            if self.p["weak_etags"]:
                etag = "W/" + etag
        return Response(200, body, self._headers(etag))

    def _check_expand(self, value):
        eq = self.L.features.get("ExpandQuery") or {}
        if not any(eq.get(x) for x in ("ExpandAll", "Levels", "Links", "NoLinks")):
            return self._error(400, msg.message("QueryNotSupported"))
        kind = value[:1]
        allowed = {"*": eq.get("ExpandAll"), ".": eq.get("NoLinks"), "~": eq.get("Links")}
        if not allowed.get(kind):
            return self._error(400, msg.message("QueryNotSupported"))
        levels = 1
        if "$levels=" in value:
            try:
                levels = int(value.split("$levels=", 1)[1].rstrip(")"))
            except ValueError:
                return self._error(400, msg.message("QueryNotSupported"))
        if levels < 1 or levels > eq.get("MaxLevels", 1) or (levels > 1 and not eq.get("Levels")):
            return self._error(400, msg.message("QueryParameterOutOfRange", value, "$expand",
                                                "1-%s" % eq.get("MaxLevels", 1)))
        return None

    def _collection(self, obj, q, path):
        members = obj["Members"]
        total = len(members)
        try:
            skip = max(0, int(q.get("$skip", 0)))
            top = int(q["$top"]) if "$top" in q else None
        except ValueError:
            return self._error(400, msg.message("QueryNotSupported"))
        sel = members[skip:]
        if top is not None:
            sel = sel[:top]
        out = dict(obj)
        page = self.p["page_size"]
        if page and len(sel) > page:
            sel = sel[:page]
            link = obj.get("@odata.id") or path
            nxt = "%s?$skip=%d" % (link, skip + page)
            if top is not None:
                nxt += "&$top=%d" % (top - page)
            out["Members@odata.nextLink"] = nxt
        out["Members@odata.count"] = total
        if "$expand" in q:
            bad = self._check_expand(q["$expand"])
            if bad:
                return bad
            expanded = []
            for x in sel:
                got = self.render(self.m.key(mk.odata_id(x) or ""))
                expanded.append(got[0] if got else x)
            sel = expanded
        out["Members"] = sel
        return out

    def _monitor(self, task):
        if task.monitor_gone:
            return self._error(404, msg.message("ResourceMissingAtURI", task.monitor))
        if self.faults["monitor_error"] > 0:
            # A monitor that fails a poll (its web server restarting) while the task goes on.
            self.faults["monitor_error"] -= 1
            return self._error(int(self.faults["monitor_error_status"]), msg.message("GeneralError"))
        task.tick()
        body = task.to_json()
        if task.state not in updates.TERMINAL:
            return self._json(202, body, extra=[("Location", task.monitor), ("Retry-After", "1")])
        task.finished_reads += 1
        if task.truncate:
            return self._cut_short(body)
        return self._json(200, body)

    def _cut_short(self, obj):
        """200 whose JSON body stops halfway (Content-Length says so): an answer nobody can read."""
        body = updates.dumps(obj)
        return Response(200, body[:len(body) // 2], self._headers())

    # ----- PATCH --------------------------------------------------------------------------
    def _body_json(self, req):
        try:
            obj = json.loads(req.body.decode("utf-8")) if req.body else {}
        except (ValueError, UnicodeDecodeError):
            return None, self._error(400, msg.message("MalformedJSON"))
        if not isinstance(obj, dict):
            return None, self._error(400, msg.message("MalformedJSON"))
        return obj, None

    def _precondition(self, req, key):
        if self.faults["precondition"] > 0:
            self.faults["precondition"] -= 1
            return self._error(412, msg.message("PreconditionFailed"))
        im = req.headers.get("if-match")
        if im is None:
            if self.p["if_match"] == "required":
                return self._error(428, msg.message("PreconditionRequired"))
            return None
        if im.strip() == "*":
            return None
        current = self.etags.get(key)

        def bare(t):
            t = t.strip()
            return t[2:] if t.startswith("W/") else t
        if current is None or bare(current) not in [bare(x) for x in im.split(",")]:
            return self._error(412, msg.message("PreconditionFailed"))
        return None

    def _patch(self, req, key):
        sys_ = self.by_system.get(key)
        bios_sys = self.by_settings.get(key)
        if bios_sys is None and key in self.by_bios and self.by_bios[key].settings_mode == "in-place":
            bios_sys = self.by_bios[key]   # no @Redfish.Settings: the Bios itself is written
        if sys_ is None and bios_sys is None:
            if self.render(key) is not None:
                return self._error(405, msg.message("OperationNotAllowed"), extra=[("Allow", "GET")])
            return self._error(404, msg.message("ResourceMissingAtURI", req.path))
        body, err = self._body_json(req)
        if err:
            return err
        bad = self._precondition(req, key)
        if bad:
            return bad
        if sys_ is not None:
            return self._patch_system(sys_, body)
        errors = bios_sys.patch_bios(body)
        if errors:
            return self._error(400, errors)
        return self._ok_patch(key)

    def _patch_system(self, sys_, body):
        system = sys_.resource
        errors = []
        for name, value in body.items():
            if name.startswith("@odata."):
                continue
            if name not in SYSTEM_WRITABLE:
                kind = "PropertyNotWritable" if name in system else "PropertyUnknown"
                errors.append(msg.message(kind, name, related=["/" + name]))
            elif name == "Boot":
                if not isinstance(value, dict):
                    errors.append(msg.message("PropertyValueTypeError", value, name, related=["/Boot"]))
                    continue
                cur = system.get("Boot", {})
                allowed = cur.get("BootSourceOverrideTarget@Redfish.AllowableValues")
                t = value.get("BootSourceOverrideTarget")
                if t is not None and allowed and t not in allowed:
                    errors.append(msg.message("PropertyValueNotInList", t, "BootSourceOverrideTarget",
                                              related=["/Boot/BootSourceOverrideTarget"]))
        if errors:
            return self._error(400, errors)
        for name, value in body.items():
            if name == "Boot":
                b = dict(system.get("Boot", {}))
                b.update(value)
                system["Boot"] = b
            elif not name.startswith("@odata."):
                system[name] = value
        self.bump(sys_.key)
        return self._ok_patch(sys_.key)

    def _ok_patch(self, key):
        mode = self.p["bios_patch_status"]
        etag = [("ETag", self.etags[key])]
        if mode == "ilo":
            info = msg.message("SystemResetRequired", severity="Warning")
            info["MessageId"] = "iLO.2.14.SystemResetRequired"
            info["Message"] = "One or more properties were changed and will not take effect until system is reset."
            return self._json(200, {"error": {"code": "iLO.0.10.ExtendedInfo",
                                              "message": "See @Message.ExtendedInfo for more information.",
                                              "@Message.ExtendedInfo": [info]}}, self.etags[key])
        if mode == 200:
            return self._json(200, msg.success_info(), self.etags[key])
        return Response(204, b"", [("OData-Version", "4.0")] + etag)

    # ----- DELETE -------------------------------------------------------------------------
    def _delete(self, req, key):
        if self.k_sessions and key.startswith(self.k_sessions + "/"):
            sid = key[len(self.k_sessions) + 1:]
            s = self.sessions.by_id.get(sid) or next(
                (x for x in self.sessions.by_id.values() if x.id.lower() == sid), None)
            if s is None:
                return self._error(404, msg.message("ResourceMissingAtURI", req.path))
            self.sessions.remove(s)
            return Response(204, b"", [("OData-Version", "4.0")])
        if key in self.monitors:
            t = self.monitors[key]
            if t.monitor_gone:
                return self._error(404, msg.message("ResourceMissingAtURI", req.path))
            if t.state not in updates.TERMINAL:
                t.state = "Cancelled"
                t.end = time.time()
            return Response(204, b"", [("OData-Version", "4.0")])
        if self.render(key) is not None:
            return self._error(405, msg.message("OperationNotAllowed"))
        return self._error(404, msg.message("ResourceMissingAtURI", req.path))

    # ----- POST ---------------------------------------------------------------------------
    async def _post(self, req, key):
        if self.k_sessions and key == self.k_sessions:
            return self._login(req)
        if key == self.k_multipart:
            return self._multipart(req)
        spec = self.L.actions.get(key)
        is_action = spec is not None or "/actions/" in key.lower()
        if is_action and self.p["action_if_match"] == "reject" and "if-match" in req.headers:
            return self._error(412, msg.message("PreconditionFailed"))
        if spec is None:
            if is_action:
                return self._error(404, msg.message("ResourceMissingAtURI", req.path))
            if self.render(key) is not None:
                return self._error(405, msg.message("OperationNotAllowed"))
            return self._error(404, msg.message("ResourceMissingAtURI", req.path))
        # Every action honours what it advertises (ActionInfo, inline AllowableValues).
        body, err = self._body_json(req)
        if err:
            return err
        errors = spec.validate(body, self.m.key)
        if errors:
            return self._error(400, errors)
        if spec.name == "#ComputerSystem.Reset" and key in self.by_reset:
            return self._reset(req, self.by_reset[key])
        if spec.name == "#UpdateService.SimpleUpdate":
            return self._simple_update(req, spec)
        if spec.name == "#Manager.Reset":
            return self._manager_reset(req)
        if spec.name == "#Bios.ResetBios":
            sys_ = self.by_bios.get(self.m.key(spec.owner or ""))
            if sys_:
                sys_.reset_bios()
        return Response(204, b"", [("OData-Version", "4.0")])

    def _login(self, req):
        if self.p["login_rejects_authorization"] and "authorization" in req.headers:
            return self._error(415, msg.message("GeneralError"))
        body, err = self._body_json(req)
        if err:
            return err
        user, password = body.get("UserName"), body.get("Password")
        if user is None or password is None:
            missing = "UserName" if user is None else "Password"
            return self._error(400, msg.message("ActionParameterMissing", "Session create", missing))
        if not self.sessions.check_password(user, password):
            return self._error(401, msg.message("NoValidSession"))
        self.sessions.expire_idle()
        if len(self.sessions.by_id) >= self.session_limit:
            status = self.p["session_limit_status"]
            key = "CreateLimitReachedForResource" if status == 400 else "SessionLimitExceeded"
            return self._error(status, msg.message(key))
        s = self.sessions.create(str(user), lambda sid: child(self.L.sessions, sid))
        headers = self._headers()
        headers.append(("X-Auth-Token", s.token))
        loc = self.p["session_location"]
        if loc == "relative":
            headers.append(("Location", s.link))
        elif loc == "absolute":
            headers.append(("Location", self.base_url() + s.link))
        if self.p["session_create_status"] == 204:
            return Response(204, b"", [h for h in headers if h[0] != "Content-Type"])
        return Response(201, updates.dumps(s.to_json()), headers)

    # ----- control API view ---------------------------------------------------------------
    def state(self):
        return {
            "name": self.name, "vendor": self.vendor, "address": self.address, "port": self.port,
            "url": self.base_url(), "node": self.node, "tls": self.tls,
            "power": self.primary.power, "boots": self.primary.boots,
            "sessions": self.sessions.count(), "session_limit": self.session_limit,
            "bios": self.primary.state()["bios"],
            "systems": {s.id: s.state() for s in self.systems},
            "firmware": {self.m.resources[k].get("Name", k) + " [" + self.m.resources[k].get("Id", "") + "]":
                         {"version": v, "staged": self.fw_staged.get(k), "link": self.m.resources[k].get("@odata.id")}
                         for k, v in self.fw_version.items()},
            "tasks": [t.to_json() for t in self.tasks.values()],
            "faults": dict(self.faults),
            "node_events": self.node_events[-50:],
            **self.node_link_state(),
            "requests": len(self.log),
            "system_etag": self.etags.get(self.primary.key),
        }
