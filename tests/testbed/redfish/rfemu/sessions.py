"""Per-BMC Redfish sessions: login, token lookup with idle expiry, logout (redfish-notes §2)."""

import base64
import hmac
import secrets
import time


class Session:
    __slots__ = ("id", "token", "user", "link", "created", "last")

    def __init__(self, sid, token, user, link):
        self.id = sid
        self.token = token
        self.user = user
        self.link = link
        self.created = self.last = time.time()

    def to_json(self):
        # Never the password: the DMTF mockup server stores the posted body, we do not.
        return {"@odata.type": "#Session.v1_7_0.Session", "@odata.id": self.link, "Id": self.id,
                "Name": "User Session", "Description": "Manager User Session",
                "UserName": self.user}


class Sessions:
    def __init__(self, user, password, timeout):
        self._user = user.encode("utf-8")
        self._password = password.encode("utf-8")
        self.timeout = timeout
        self.by_token = {}
        self.by_id = {}

    def check_password(self, user, password):
        ok_user = hmac.compare_digest(str(user).encode("utf-8"), self._user)
        ok_pass = hmac.compare_digest(str(password).encode("utf-8"), self._password)
        return ok_user and ok_pass

    def check_basic(self, header_value):
        try:
            raw = base64.b64decode(header_value.split(None, 1)[1].strip(), validate=True).decode("utf-8")
        except Exception:  # malformed header: not authenticated
            return False
        user, _, password = raw.partition(":")
        return self.check_password(user, password)

    def expire_idle(self):
        now = time.time()
        for s in [s for s in self.by_id.values() if now - s.last > self.timeout]:
            self.remove(s)

    def lookup(self, token):
        s = self.by_token.get(token)
        if s is None:
            return None
        if time.time() - s.last > self.timeout:
            self.remove(s)
            return None
        s.last = time.time()
        return s

    def create(self, user, link_of):
        sid = secrets.token_hex(8)
        s = Session(sid, secrets.token_hex(16), user, link_of(sid))
        self.by_token[s.token] = s
        self.by_id[sid] = s
        return s

    def remove(self, s):
        self.by_token.pop(s.token, None)
        self.by_id.pop(s.id, None)

    def clear(self):
        self.by_token.clear()
        self.by_id.clear()

    def count(self):
        self.expire_idle()
        return len(self.by_id)
