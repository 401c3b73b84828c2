"""One ComputerSystem of an emulated BMC: its power, its boots, and its BIOS (current values,
pending values, the last apply's messages). A BMC has one per member of its Systems collection
(HPE Cray EX blades have two), each with its own copies: two BMCs serving the same mockup, or
two systems of one BMC, never share a value that changes."""

from . import bios as biosmod
from . import messages as msg
from . import mockup as mk
from . import updates


class SystemState:
    def __init__(self, bmc, layout):
        m, k = bmc.m, bmc.m.key
        self.bmc = bmc
        self.layout = layout
        self.link = layout.link
        self.id = layout.id
        self.key = k(layout.link)
        self.resource = mk.deep(m.get(layout.link))
        init = bmc.p["initial_power"]
        listed = self.resource.get("PowerState")
        if init == "mockup":
            init = listed if listed in ("On", "Off") else "On"
        self.power = init
        self.power_task = None
        self.boots = 0
        self.reset_key = k(layout.reset_target) if layout.reset_target else None
        self.bios_key = k(layout.bios) if layout.bios else None
        self.settings_key = k(layout.bios_settings) if layout.bios_settings else None
        self.settings_mode = layout.settings_mode
        bios = m.get(layout.bios) or {}
        listed_attrs = bios.get("Attributes") if isinstance(bios.get("Attributes"), dict) else {}
        self.bios_shapes = listed_attrs   # the mockup's, read-only: rendering copies
        self.bios_current = {n: biosmod.current_of(v) for n, v in listed_attrs.items()}
        self.registry = biosmod.Registry(layout.registry) if layout.registry \
            else biosmod.Registry.from_listing(listed_attrs)
        rs = bios.get("@Redfish.Settings") if isinstance(bios.get("@Redfish.Settings"), dict) else {}
        # The last apply's outcome as the mockup recorded it (e.g. AMI's SettingsFailed) stays
        # until this BMC applies settings itself.
        self.bios_messages = mk.deep(rs.get("Messages", []))
        self.bios_time = rs.get("Time")
        self.bios_apply_time = None
        self.bios_pending = {}
        if self.settings_mode == "object":
            so = m.get(layout.bios_settings) or {}
            for n, v in (so.get("Attributes") or {}).items():
                v = biosmod.current_of(v)
                if n in self.bios_current and not _same(self.bios_current[n], v):
                    self.bios_pending[n] = v   # the mockup's own pending values, as it shows them

    # ----- rendering ----------------------------------------------------------------------
    def render_system(self):
        d = dict(self.resource)
        d["PowerState"] = self.power
        d["@odata.etag"] = self.bmc.etags[self.key]
        return d, self.bmc.etags[self.key]

    def render_bios(self):
        d = dict(self.bmc.m.resources[self.bios_key])
        if self.bios_shapes or "Attributes" in d:
            d["Attributes"] = {n: biosmod.render(self.bios_shapes.get(n), v)
                               for n, v in self.bios_current.items()}
        if isinstance(d.get("@Redfish.Settings"), dict):
            s = dict(d["@Redfish.Settings"])
            if self.settings_key:
                s["ETag"] = self.bmc.etags.get(self.settings_key, "")
            s["Messages"] = list(self.bios_messages)
            if self.bios_time is not None:
                s["Time"] = self.bios_time
            d["@Redfish.Settings"] = s
        d["@odata.etag"] = self.bmc.etags[self.bios_key]
        return d, self.bmc.etags[self.bios_key]

    def render_settings(self):
        d = dict(self.bmc.m.resources.get(self.settings_key) or {"@odata.id": self.layout.bios_settings})
        attrs = dict(self.bios_current)
        attrs.update(self.bios_pending)
        d["Attributes"] = attrs
        if self.bios_apply_time:
            d["@Redfish.SettingsApplyTime"] = {"ApplyTime": self.bios_apply_time}
        d["@odata.etag"] = self.bmc.etags[self.settings_key]
        return d, self.bmc.etags[self.settings_key]

    # ----- BIOS writes --------------------------------------------------------------------
    def supported_apply_times(self):
        bios = self.bmc.m.resources.get(self.bios_key) or {}
        rs = bios.get("@Redfish.Settings")
        times = rs.get("SupportedApplyTimes") if isinstance(rs, dict) else None
        return times if isinstance(times, list) else ["OnReset"]

    def patch_bios(self, body):
        """A PATCH of the settings object (or, without one, of the Bios itself): the values
        become pending and take effect on the next boot. All or nothing."""
        errors = []
        attrs = body.get("Attributes")
        apply_time = None
        for name in body:
            if name in ("Attributes", "@Redfish.SettingsApplyTime") or name.startswith("@odata."):
                continue
            kind = "PropertyNotWritable" if self.settings_mode == "in-place" and name in \
                self.bmc.m.resources.get(self.bios_key, {}) else "PropertyUnknown"
            errors.append(msg.message(kind, name, related=["/" + name]))
        if "@Redfish.SettingsApplyTime" in body:
            at = body["@Redfish.SettingsApplyTime"]
            apply_time = at.get("ApplyTime") if isinstance(at, dict) else None
            if apply_time not in self.supported_apply_times():
                errors.append(msg.message("PropertyValueNotInList", apply_time, "ApplyTime",
                                          related=["/@Redfish.SettingsApplyTime/ApplyTime"]))
        if not isinstance(attrs, dict):
            if attrs is not None or not errors:
                errors.append(msg.message("PropertyValueTypeError", attrs, "Attributes",
                                          related=["/Attributes"]))
        else:
            errors.extend(self.registry.validate(attrs))
        if errors:
            return errors
        self.bios_pending.update(attrs)
        # A value equal to the current one is no longer a pending change.
        for n in [n for n, v in self.bios_pending.items() if n in self.bios_current
                  and _same(self.bios_current[n], v)]:
            del self.bios_pending[n]
        if apply_time:
            self.bios_apply_time = apply_time
        self.bmc.bump(self.settings_key or self.bios_key)
        return []

    def reset_bios(self):
        """Bios.ResetBios: the registry's defaults become pending."""
        self.bios_pending = {n: v for n, v in self.registry.defaults().items()
                             if not _same(self.bios_current.get(n), v)}
        self.bmc.bump(self.settings_key or self.bios_key)

    def boot(self):
        """A host (re)boot: pending BIOS settings take effect."""
        self.boots += 1
        self.bmc.bump(self.key)
        if self.bios_pending:
            self.bios_current.update(self.bios_pending)
            self.bios_messages = [dict(msg.message("Success", severity="OK"),
                                       RelatedProperties=["/Attributes/" + n for n in sorted(self.bios_pending)])]
            self.bios_pending = {}
            self.bios_apply_time = None
            self.bios_time = updates.now_iso()
            self.bmc.bump(self.bios_key)
            if self.settings_key:
                self.bmc.bump(self.settings_key)

    def state(self):
        return {"link": self.link, "power": self.power, "boots": self.boots,
                "bios": {"current": self.bios_current, "pending": self.bios_pending,
                         "apply_time": self.bios_apply_time, "write": self.settings_mode}}


def _same(a, b):
    return a == b and type(a) is type(b)
