"""Firmware update requests: the image naming convention, multipart/form-data parsing, and
the Task model (redfish-notes §6/§7).

Image convention: the image's file name (last path segment of ImageURI, or the filename of the
multipart UpdateFile part), URL-decoded, minus a letters-only extension, is
"<Component>-<Version>".
<Component> is a FirmwareInventory member's Id, SoftwareId or Name; the longest key that is a
prefix followed by '-' wins, so "BMC-24.09.17.bin" -> BMC / 24.09.17 and
"System ROM-A47 v2.60 (01/01/2024).fwpkg" -> System ROM / "A47 v2.60 (01/01/2024)".
Targets (inventory URIs), when given, choose the component and the file name only gives the
version (everything after the component prefix, or after the first '-').

The version then takes the form the BMC's inventory shows (vendor_form): where the mockup's
Version ends in a build date (iLO "2.70 May 16 2022", "A47 v2.58 (05/19/2022)"), an updated
member reports the image's version with a date in that same form, as the real BMC does."""

import datetime
import json
import os
import re
import time
import urllib.parse

TERMINAL = ("Completed", "Exception", "Killed", "Cancelled")


def image_stem(name):
    """The file name without a letters-only extension (.bin, .fwpkg): "BMC-1.2.3" stays whole."""
    name = urllib.parse.unquote(name.rsplit("/", 1)[-1])
    stem, ext = os.path.splitext(name)
    return stem if ext[1:].isalpha() else name


def resolve(stem, members, targets, key_of):
    """members: list of (key, dict). Returns (member key, version) or (None, reason)."""
    if targets:
        want = key_of(targets[0])
        for k, res in members:
            if k == want:
                version = _version_after(stem, res) or stem.split("-", 1)[-1]
                return k, version
        return None, "Targets names no FirmwareInventory member"
    best = None
    for k, res in members:
        for name in (res.get("Id"), res.get("SoftwareId"), res.get("Name")):
            if name and stem.startswith(name + "-") and len(stem) > len(name) + 1:
                if best is None or len(name) > len(best[1]):
                    best = (k, name)
    if best is None:
        return None, "image name matches no FirmwareInventory member (want <Component>-<Version>.bin)"
    return best[0], stem[len(best[1]) + 1:]


def resolve_all(stem, members, targets, key_of):
    """Every (member key, version) an update changes: one per Targets entry (all of them, in
    order, each must name a member), or the one member the image name picks. [] when the
    request names no member."""
    out = []
    for t in targets or [None]:
        k, version = resolve(stem, members, [t] if t else [], key_of)
        if k is None or not version:
            return []
        if all(k != x for x, _v in out):
            out.append((k, version))
    return out


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# The trailing build dates vendors append to Version, each with how to write a date that way.
BUILD_DATES = (
    (re.compile(r" (%s) \d{1,2} \d{4}$" % "|".join(MONTHS)),
     lambda d: " %s %02d %04d" % (MONTHS[d.month - 1], d.day, d.year)),       # iLO: May 16 2022
    (re.compile(r" \(\d{2}/\d{2}/\d{4}\)$"),
     lambda d: " (%02d/%02d/%04d)" % (d.month, d.day, d.year)),                # ROM: (05/19/2022)
    (re.compile(r" \(\d{4}-\d{2}-\d{2}\)$"),
     lambda d: " (%04d-%02d-%02d)" % (d.year, d.month, d.day)),                # (2022-05-19)
)


def vendor_form(version, like, today=None):
    """`version` (from an image name) as the BMC reports it, given `like`, the Version its
    inventory showed for that member: when `like` ends in a build date and `version` does not,
    `version` plus the date of `today` (default: today, UTC) written the same way. Otherwise
    `version` unchanged. ("2.80", "2.70 May 16 2022") -> "2.80 Jun 01 2024"."""
    if not isinstance(like, str):
        return version
    for pattern, write in BUILD_DATES:
        if pattern.search(like):
            if any(p.search(version) for p, _w in BUILD_DATES):
                return version
            return version + write(today or datetime.datetime.now(datetime.timezone.utc).date())
    return version


def _version_after(stem, res):
    for name in (res.get("Id"), res.get("SoftwareId"), res.get("Name")):
        if name and stem.startswith(name + "-"):
            return stem[len(name) + 1:]
    return None


def parse_multipart(content_type, body):
    """Returns {part name: (filename or None, headers dict, bytes)} or None if malformed."""
    boundary = None
    for p in content_type.split(";")[1:]:
        k, _, v = p.strip().partition("=")
        if k.lower() == "boundary":
            boundary = v.strip('"')
    if not boundary:
        return None
    delim = b"--" + boundary.encode("latin-1")
    parts = {}
    for chunk in body.split(delim)[1:]:
        if chunk.startswith(b"--"):
            break
        chunk = chunk[2:] if chunk.startswith(b"\r\n") else chunk
        head, sep, data = chunk.partition(b"\r\n\r\n")
        if not sep:
            return None
        if data.endswith(b"\r\n"):
            data = data[:-2]
        headers = {}
        for line in head.decode("latin-1").split("\r\n"):
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        disp = headers.get("content-disposition", "")
        name = filename = None
        for item in disp.split(";")[1:]:
            k, _, v = item.strip().partition("=")
            if k == "name":
                name = v.strip('"')
            elif k == "filename":
                filename = v.strip('"')
        if name:
            parts[name] = (filename, headers, data)
    return parts


def now_iso(t=None):
    return datetime.datetime.fromtimestamp(t or time.time(), datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S+00:00")


class Task:
    def __init__(self, tid, task_link, monitor_link, name, duration, fail, components):
        self.id = tid
        self.link = task_link
        self.monitor = monitor_link
        self.name = name
        self.start = time.time()
        self.duration = duration
        self.fail = fail
        self.components = components   # [(firmware member key, new version)]
        self.state = "New"
        self.end = None
        self.messages = []
        self.monitor_gone = False
        self.finished_reads = 0
        self.critical = False    # fault task_critical: Completed, TaskStatus Critical, ApplyFailed
        self.truncate = False    # fault task_truncate: its finished answers are cut short

    def percent(self):
        if self.state in TERMINAL:
            return 100 if self.state == "Completed" else None
        return min(99, int(100 * (time.time() - self.start) / max(self.duration, 0.001)))

    def tick(self):
        if self.state == "New" and time.time() - self.start > min(0.2, self.duration / 4):
            self.state = "Running"

    def to_json(self):
        self.tick()
        d = {
            "@odata.type": "#Task.v1_7_4.Task",
            "@odata.id": self.link,
            "Id": self.id,
            "Name": self.name,
            "TaskState": self.state,
            "StartTime": now_iso(self.start),
            "Messages": self.messages,
        }
        if self.monitor:
            d["TaskMonitor"] = self.monitor
        p = self.percent()
        if p is not None:
            d["PercentComplete"] = p
        if self.state in TERMINAL:
            d["EndTime"] = now_iso(self.end)
            d["TaskStatus"] = "OK" if self.state == "Completed" and not self.critical else "Critical"
        else:
            d["TaskStatus"] = "OK"
        return d


def dumps(obj):
    return json.dumps(obj, separators=(",", ":")).encode("utf-8")
