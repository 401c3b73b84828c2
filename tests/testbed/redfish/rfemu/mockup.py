"""Loads one short-form mockup (directory root = /redfish/v1) into memory, once per vendor mode,
and finds the resources the stateful layer owns (systems, their BIOS and settings objects, the
update service, firmware, actions, ...) by following links from the service root, never by
building URIs.

The mockups are third-party data and live outside the project: ../shared/redfish-mockups/
next to the source tree, or wherever PLUMB_REDFISH_MOCKUPS points."""

import copy
import json
import os
import urllib.parse

from . import actions

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SYNTHETIC_DIR = os.path.join(HERE, "synthetic")
MOCKUPS_ENV = "PLUMB_REDFISH_MOCKUPS"


def mockup_dir():
    """Where the mockups are: $PLUMB_REDFISH_MOCKUPS, else ../shared/redfish-mockups/ next to
    the source root."""
    return os.environ.get(MOCKUPS_ENV) or os.path.normpath(
        os.path.join(SOURCE_ROOT, "..", "shared", "redfish-mockups"))


class MockupMissing(ValueError):
    def __init__(self, name):
        super().__init__(
            "Redfish mockup %r not found in %s (third-party data kept outside the project: put the "
            "mockups in ../shared/redfish-mockups/ next to the source tree, or set %s)"
            % (name, mockup_dir(), MOCKUPS_ENV))


def odata_id(obj):
    return obj.get("@odata.id") if isinstance(obj, dict) else None


def child(link, ident):
    """A child link in the collection's own style (iLO: trailing '/')."""
    return link + ident + "/" if link.endswith("/") else link + "/" + ident


class Mockup:
    def __init__(self, name, case_insensitive):
        self.name = name
        self.case_insensitive = case_insensitive
        self.resources = {}   # normalized key -> dict
        self.errors = set()   # keys whose captured body is an error payload (served as 404)
        self.metadata = None  # $metadata XML bytes
        root = os.path.join(mockup_dir(), name)
        if not os.path.isfile(os.path.join(root, "index.json")):
            raise MockupMissing(name)
        self._load(root)

    def key(self, path):
        """Normalized lookup key of a URL path (no query): no trailing '/', decoded once,
        lower-case in case-insensitive (iLO) mode."""
        p = urllib.parse.unquote(path)
        while len(p) > 1 and p.endswith("/"):
            p = p[:-1]
        return p.lower() if self.case_insensitive else p

    def _load(self, root):
        for dirpath, _dirs, files in os.walk(root):
            rel = os.path.relpath(dirpath, root)
            url = "/redfish/v1" if rel == "." else "/redfish/v1/" + rel.replace(os.sep, "/")
            if "index.xml" in files and rel == "$metadata":
                with open(os.path.join(dirpath, "index.xml"), "rb") as f:
                    self.metadata = f.read()
                continue
            if "index.json" not in files:
                continue
            with open(os.path.join(dirpath, "index.json"), "rb") as f:
                try:
                    data = json.loads(f.read().decode("utf-8"))
                except ValueError:
                    continue
            k = self.key(url)
            self.resources[k] = data
            if isinstance(data, dict) and "error" in data and "@odata.id" not in data:
                self.errors.add(k)

    def get(self, link):
        if link is None:
            return None
        return self.resources.get(self.key(link))

    def put(self, link, data):
        self.resources[self.key(link)] = data
        self.errors.discard(self.key(link))


def members(m, collection_link):
    coll = m.get(collection_link)
    if not isinstance(coll, dict) or not isinstance(coll.get("Members"), list):
        return []
    return [odata_id(x) for x in coll["Members"] if odata_id(x)]


def first_member(m, collection_link):
    links = members(m, collection_link)
    return links[0] if links else None


def load_registry_file(name):
    with open(os.path.join(SYNTHETIC_DIR, name + ".json")) as f:
        return json.load(f)


def find_registry(m, registries_link, name):
    """The AttributeRegistry resource named `name`, through the Registries collection (English
    location first); None when the mockup does not ship it."""
    if not name:
        return None
    for link in members(m, registries_link):
        f = m.get(link) or {}
        if f.get("Registry") != name and f.get("Id") != name:
            continue
        locs = sorted(f.get("Location", []), key=lambda x: x.get("Language") != "en")
        for loc in locs:
            reg = m.get(loc.get("Uri"))
            if isinstance(reg, dict) and "RegistryEntries" in reg:
                return reg
    return None


class SystemLayout:
    """Where one ComputerSystem's stateful parts live, as its mockup links them.

    settings_mode says how the BIOS is written:
      "object"     @Redfish.Settings.SettingsObject: PATCH there, pending values readable there;
      "patch-only" @Redfish.Settings without a SettingsObject (AMI MegaRAC): a PATCH-only Bios/SD
                   (GET answers 405), as AMI does;
      "in-place"   no @Redfish.Settings (HPE Cray EX): PATCH the Bios resource itself;
      None         the system has no Bios."""

    def __init__(self, m, link, registries):
        self.link = link
        sysres = m.get(link) or {}
        self.id = sysres.get("Id") or link.rstrip("/").rsplit("/", 1)[-1]
        act = sysres.get("Actions", {}).get("#ComputerSystem.Reset", {})
        self.reset_target = act.get("target")
        self.bios = odata_id(sysres.get("Bios"))
        bios = m.get(self.bios) or {}
        rs = bios.get("@Redfish.Settings")
        self.bios_settings = odata_id(rs.get("SettingsObject")) if isinstance(rs, dict) else None
        if not self.bios:
            self.settings_mode = None
        elif self.bios_settings:
            self.settings_mode = "object"
        elif isinstance(rs, dict):
            self.settings_mode = "patch-only"
            self.bios_settings = child(self.bios, "SD")
        else:
            self.settings_mode = "in-place"
        self.registry_name = bios.get("AttributeRegistry")
        self.registry = find_registry(m, registries, self.registry_name)


class Layout:
    """Where the stateful resources of one mockup live (links as the mockup writes them)."""

    def __init__(self, m, vendor):
        root = m.get("/redfish/v1")
        self.root = root
        self.session_service = odata_id(root.get("SessionService"))
        self.sessions = odata_id(root.get("Links", {}).get("Sessions")) or \
            odata_id((m.get(self.session_service) or {}).get("Sessions"))
        self.registries = odata_id(root.get("Registries"))
        self.systems = [SystemLayout(m, link, self.registries)
                        for link in members(m, odata_id(root.get("Systems")))]
        if not self.systems:
            raise ValueError("mockup %s has no ComputerSystem" % m.name)
        self.system = self.systems[0].link
        self.manager = first_member(m, odata_id(root.get("Managers")))
        self.update_service = odata_id(root.get("UpdateService"))
        self.task_service = odata_id(root.get("Tasks"))
        ts = m.get(self.task_service) or {}
        self.tasks = odata_id(ts.get("Tasks"))
        us = m.get(self.update_service) or {}
        # Firmware may be listed under FirmwareInventory, SoftwareInventory or both.
        self.firmware = odata_id(us.get("FirmwareInventory"))
        self.software = odata_id(us.get("SoftwareInventory"))
        seen = set()
        self.firmware_members = []
        for coll in (self.firmware, self.software):
            for link in members(m, coll):
                if m.key(link) not in seen and isinstance(m.get(link), dict):
                    seen.add(m.key(link))
                    self.firmware_members.append(link)
        self.multipart = us.get("MultipartHttpPushUri")
        self.max_image = us.get("MaxImageSizeBytes")
        push = us.get("HttpPushUriOptions", {}).get("HttpPushUriApplyTime", {})
        self.push_apply_time = push.get("ApplyTime") if isinstance(push, dict) else None
        self.features = root.get("ProtocolFeaturesSupported", {})
        self.actions = actions.index(m)


def _add_member(m, coll_link, member_link):
    coll = m.get(coll_link)
    coll["Members"].append({"@odata.id": member_link})
    coll["Members@odata.count"] = len(coll["Members"])


def apply_additions(m, vendor):
    """Emulator additions of the dmtf/ilo/openbmc modes, documented in README.md ("Additions to
    the mockups"). The neutral mode adds nothing: it serves the mockup as it is."""
    root = m.get("/redfish/v1")
    systems = odata_id(root.get("Systems"))
    system_link = first_member(m, systems)
    system = m.get(system_link)
    us_link = odata_id(root.get("UpdateService"))
    us = m.get(us_link)
    if vendor == "dmtf":
        # A synthetic registry for the name the mockup references, so PATCHes can be validated.
        reg = load_registry_file("BiosAttributeRegistryP89.v1_0_0")
        reg_link = "/redfish/v1/Registries/BiosAttributeRegistryP89.v1_0_0"
        uri = reg_link + "/Registry"
        m.put(reg_link, {"@odata.type": "#MessageRegistryFile.v1_1_5.MessageRegistryFile",
                         "@odata.id": reg_link, "Id": reg["Id"], "Name": reg["Name"] + " file",
                         "Languages": ["en"], "Registry": reg["Id"],
                         "Location": [{"Language": "en", "Uri": uri}]})
        reg = dict(reg, **{"@odata.id": uri})
        m.put(uri, reg)
        _add_member(m, odata_id(root.get("Registries")), reg_link)
        us["MultipartHttpPushUri"] = "/redfish/v1/UpdateService/upload"
        us["MaxImageSizeBytes"] = 64 * 1024 * 1024
        # The dmtf mode answers SimpleUpdate with Targets (the mockup's ActionInfo lists none).
        us["Actions"]["#UpdateService.SimpleUpdate"].pop("@Redfish.ActionInfo", None)
        bios = m.get(odata_id(system.get("Bios")))
        bios["Attributes"].update({"SriovGlobalEnable": "Disabled", "WorkloadProfile": "GeneralPowerEfficientCompute",
                                   "IommuEnable": True, "SystemSerialNumber": "437XR1138R2"})
        bios["@Redfish.Settings"]["SupportedApplyTimes"] = ["OnReset"]
        bios["@Redfish.Settings"]["Messages"] = []
        bios["@Redfish.Settings"].pop("Time", None)
        # A BMC starts with nothing pending: the mockup's frozen pending values are dropped.
        settings = m.get(odata_id(bios["@Redfish.Settings"].get("SettingsObject")))
        settings["Attributes"] = dict(bios["Attributes"])
    elif vendor == "openbmc":
        # bmcweb with a BIOS-config provider (IBM's fork adds Bios/Settings): attributes, a
        # settings object, a registry, and a BIOS entry in FirmwareInventory ("bios_active").
        bios_link = odata_id(system.get("Bios"))
        bios = m.get(bios_link)
        reg = load_registry_file("BiosAttributeRegistryP89.v1_0_0")
        reg_link = odata_id(root.get("Registries")) + "/BiosAttributeRegistryP89.v1_0_0"
        uri = reg_link + "/Registry"
        m.put(reg_link, {"@odata.type": "#MessageRegistryFile.v1_1_5.MessageRegistryFile",
                         "@odata.id": reg_link, "Id": reg["Id"], "Name": reg["Name"] + " file",
                         "Languages": ["en"], "Registry": reg["Id"],
                         "Location": [{"Language": "en", "Uri": uri}]})
        m.put(uri, dict(reg, **{"@odata.id": uri}))
        _add_member(m, odata_id(root.get("Registries")), reg_link)
        bios["AttributeRegistry"] = reg["Id"]
        bios["Attributes"] = {a["AttributeName"]: a["DefaultValue"]
                              for a in reg["RegistryEntries"]["Attributes"]}
        settings_link = bios_link + "/Settings"
        bios["@Redfish.Settings"] = {"@odata.type": "#Settings.v1_3_5.Settings",
                                     "SettingsObject": {"@odata.id": settings_link},
                                     "SupportedApplyTimes": ["OnReset"], "Messages": []}
        m.put(settings_link, {"@odata.id": settings_link, "@odata.type": "#Bios.v1_1_0.Bios",
                              "Id": "Settings", "Name": "BIOS Pending Settings",
                              "AttributeRegistry": reg["Id"], "Attributes": {}})
        fw = odata_id(us.get("FirmwareInventory"))
        bios_fw = fw + "/bios_active"
        m.put(bios_fw, {"@odata.id": bios_fw, "@odata.type": "#SoftwareInventory.v1_1_0.SoftwareInventory",
                        "Description": "Host image", "Id": "bios_active", "Name": "Software Inventory",
                        "RelatedItem": [{"@odata.id": system_link}], "RelatedItem@odata.count": 1,
                        "Status": {"Health": "OK", "HealthRollup": "OK", "State": "Enabled"},
                        "Updateable": True, "Version": "1.4.0"})
        _add_member(m, fw, bios_fw)
        system["PowerState"] = "On"
    elif vendor == "ilo":
        ss = m.get(odata_id(root.get("SessionService")))
        ss.setdefault("SessionTimeout", 1800)


_CACHE = {}


def load(vendor, mockup_name, case_insensitive):
    """(Mockup, Layout), parsed once per (vendor mode, mockup): BMCs of the same mode share the
    read-only data and keep their own state (bmc.py)."""
    k = (vendor, mockup_name, case_insensitive)
    if k not in _CACHE:
        m = Mockup(mockup_name, case_insensitive)
        apply_additions(m, vendor)
        _CACHE[k] = (m, Layout(m, vendor))
    return _CACHE[k]


def deep(obj):
    return copy.deepcopy(obj)
