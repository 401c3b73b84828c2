"""UpdateService: SimpleUpdate, multipart push, update tasks and their monitors, immediate
or staged firmware versions (redfish-notes §6/§7). Mixed into Bmc. SimpleUpdate parameters are
checked against the action's ActionInfo/AllowableValues before _simple_update runs
(actions.py); every entry of Targets is updated."""

import asyncio
import json
import time
import urllib.parse

from . import messages as msg
from . import mockup as mk
from . import updates
from .mockup import child

ANY_PROTOCOL = ["HTTP", "HTTPS", "FTP", "SFTP", "TFTP", "SCP", "NFS", "CIFS"]


class UpdateMixin:
    def _simple_update(self, req, spec):
        body, err = self._body_json(req)
        if err:
            return err
        action = "UpdateService.SimpleUpdate"
        uri = body.get("ImageURI")
        if not isinstance(uri, str) or not uri:
            return self._error(400, msg.message("ActionParameterMissing", action, "ImageURI"))
        scheme = urllib.parse.urlsplit(uri).scheme.upper()
        proto = body.get("TransferProtocol")
        allowed = spec.allowable("TransferProtocol") if spec else None
        allowed = allowed or ANY_PROTOCOL
        if proto is not None and proto not in allowed:
            return self._error(400, msg.message("ActionParameterValueNotInList", proto,
                                                "TransferProtocol", action))
        if not scheme and proto is None:
            return self._error(400, msg.message("ActionParameterMissing", action, "TransferProtocol"))
        if scheme and scheme not in allowed:
            return self._error(400, msg.message("ActionParameterValueFormatError", uri, "ImageURI", action))
        path = urllib.parse.urlsplit(uri).path if scheme else uri
        return self._start_update(updates.image_stem(path), body.get("Targets"),
                                  body.get("@Redfish.OperationApplyTime"), "ImageURI", action,
                                  component=body.get("UpdateComponent"))

    def _multipart(self, req):
        ctype = req.headers.get("content-type", "")
        if not ctype.lower().startswith("multipart/form-data"):
            return self._error(415, msg.message("GeneralError"))
        limit = self.L.max_image or (self.m.get(self.L.update_service) or {}).get("MaxImageSizeBytes")
        if limit and len(req.body) > limit + 65536:
            return self._error(413, msg.message("PayloadTooLarge"))
        parts = updates.parse_multipart(ctype, req.body)
        if parts is None or "UpdateFile" not in parts:
            return self._error(400, msg.message("ActionParameterMissing", "MultipartHttpPush", "UpdateFile"))
        params = {}
        if "UpdateParameters" in parts:
            try:
                params = json.loads(parts["UpdateParameters"][2].decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                return self._error(400, msg.message("MalformedJSON"))
        filename, _h, data = parts["UpdateFile"]
        if limit and len(data) > limit:
            return self._error(413, msg.message("PayloadTooLarge"))
        if not filename:
            return self._error(400, msg.message("ActionParameterValueFormatError", "",
                                                "UpdateFile", "MultipartHttpPush"))
        apply_time = params.get("@Redfish.OperationApplyTime")
        if apply_time is None and self.vendor.startswith("neutral:"):
            apply_time = self.L.push_apply_time   # HttpPushUriOptions.HttpPushUriApplyTime
        return self._start_update(updates.image_stem(filename), params.get("Targets"),
                                  apply_time, "UpdateFile", "MultipartHttpPush")

    def _start_update(self, stem, targets, apply_time, param, action, component=None):
        if targets is not None and not isinstance(targets, list):
            return self._error(400, msg.message("ActionParameterValueFormatError", targets, "Targets", action))
        members = [(k, self.m.resources[k]) for k in self.fw_members]
        if not targets and component:
            # AMI's UpdateComponent names the component (BMC, BIOS, ...) instead of Targets.
            targets = [self.m.resources[k].get("@odata.id") for k, r in members
                       if component in (r.get("Id"), r.get("Name"))][:1] or None
        chosen = updates.resolve_all(stem, members, targets or [], self.m.key)
        if not chosen:
            return self._error(400, msg.message("ActionParameterValueFormatError", stem, param, action))
        # In the form the mockup's inventory shows (iLO appends the build date).
        chosen = [(k, updates.vendor_form(v, self.m.resources[k].get("Version"))) for k, v in chosen]
        if apply_time not in (None, "Immediate", "OnReset"):
            return self._error(400, msg.message("ActionParameterValueNotInList", apply_time,
                                                "@Redfish.OperationApplyTime", action))
        fail = self.faults["task_fail"] > 0
        if fail:
            self.faults["task_fail"] -= 1
        if any(self.m.resources[k].get("Updateable") is False for k, _v in chosen):
            fail = True
        staged = {k: self._staged(k, apply_time) for k, _v in chosen}
        tid = str(self.next_task)
        self.next_task += 1
        mode = self.p["task_mode"] if self.L.tasks else "no-task"   # no TaskService: no tasks
        task_link = child(self.L.tasks, tid) if self.L.tasks else None
        monitor = None
        if mode in ("monitor", "monitor-deleted") and self.L.task_service:
            monitor = child(child(self.L.task_service, "TaskMonitors"), tid)
        names = ", ".join(self.m.resources[k].get("Name") or k for k, _v in chosen)
        t = updates.Task(tid, task_link, monitor, "Firmware update: %s" % names,
                         float(self.p["task_duration"]), fail, chosen)
        for fault, attr in (("task_critical", "critical"), ("task_truncate", "truncate")):
            if self.faults[fault] > 0:
                self.faults[fault] -= 1
                setattr(t, attr, True)
        if mode != "no-task":
            self.tasks[self.m.key(task_link)] = t
            if monitor:
                self.monitors[self.m.key(monitor)] = t
        asyncio.get_event_loop().call_later(t.duration, self._finish_task, t, staged)
        if mode == "no-task":
            if self.vendor == "ilo":
                info = msg.message("Success", severity="OK")
                return self._json(200, {"error": {"code": "iLO.0.10.ExtendedInfo",
                                                  "message": "See @Message.ExtendedInfo for more information.",
                                                  "@Message.ExtendedInfo": [info]}})
            return self._json(200, msg.success_info())
        loc = self.base_url() + monitor if monitor and self.p["task_location"] == "absolute" else monitor
        extra = [("Location", loc)] if monitor else []
        if monitor:
            extra.append(("Retry-After", "1"))
        return self._json(202, t.to_json(), extra=extra)

    def _staged(self, key, apply_time):
        if apply_time == "OnReset":
            return True
        if apply_time == "Immediate":
            return False
        mode = self.p["fw_apply"]
        if mode == "on-reset":
            return True
        if mode == "bmc-immediate":
            res = self.m.resources[key]
            related = [self.m.key(mk.odata_id(x) or "") for x in res.get("RelatedItem", [])]
            is_bmc = self.m.key(self.L.manager) in related or res.get("Description") == "SystemBMC"
            return not is_bmc
        return False

    def _finish_task(self, t, staged):
        if t.state in updates.TERMINAL:
            return
        if self.faults["update_hold"]:
            # Held: the task stays Running (a BMC stuck at 99%) until the fault is cleared.
            asyncio.get_event_loop().call_later(0.2, self._finish_task, t, staged)
            return
        t.end = time.time()
        if t.critical:
            # iDRAC's way of failing: Completed, TaskStatus Critical, an ApplyFailed message.
            t.state = "Completed"
            t.messages = []
            for key, _version in t.components:
                m = msg.message("GeneralError")
                m["MessageId"] = "Update.1.0.ApplyFailed"
                m["Message"] = "The installation of image '%s' failed." % key
                t.messages.append(m)
        elif t.fail:
            t.state = "Exception"
            t.messages = []
            for key, _version in t.components:
                m = msg.message("GeneralError")
                m["MessageId"] = "Update.1.0.ApplyFailed"
                m["Message"] = "The installation of image '%s' failed." % key
                t.messages.append(m)
        else:
            t.state = "Completed"
            t.messages = []
            lag = float(self.p["inventory_lag"])
            for key, version in t.components:
                name = self.m.resources[key].get("Name", "")
                m = msg.message("Success", severity="OK")
                if staged[key]:
                    self.fw_staged[key] = version
                    m["MessageId"] = "Update.1.0.AwaitToActivate"
                    m["Message"] = "Awaiting for an action to proceed with activating image '%s' on '%s'." % (version, name)
                else:
                    if lag > 0:
                        # The inventory shows the old version a while after the update.
                        self.fw_shown_old[key] = (self.fw_version[key], time.time() + lag)
                    self.fw_version[key] = version
                    self.bump(key)
                    m["MessageId"] = "Update.1.0.UpdateSuccessful"
                    m["Message"] = "Device '%s' successfully updated with image '%s'." % (name, version)
                t.messages.append(m)
        if self.p["task_mode"] == "monitor-deleted" and t.monitor:
            asyncio.get_event_loop().call_later(float(self.p["task_linger"]), self._drop_monitor, t)

    def _drop_monitor(self, t):
        t.monitor_gone = True
        self.monitors.pop(self.m.key(t.monitor), None)
