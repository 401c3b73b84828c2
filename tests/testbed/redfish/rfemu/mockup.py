"""Loads one short-form mockup (directory root = /redfish/v1) into memory, once per vendor, and
finds the resources the stateful layer owns (system, BIOS, update service, ...) by following
links from the service root, never by building URIs."""

import copy
import json
import os
import urllib.parse

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOCKUP_DIR = os.path.join(HERE, "mockups")
SYNTHETIC_DIR = os.path.join(HERE, "synthetic")


def odata_id(obj):
    return obj.get("@odata.id") if isinstance(obj, dict) else None


class Mockup:
    def __init__(self, name, case_insensitive):
        self.name = name
        self.case_insensitive = case_insensitive
        self.resources = {}   # normalized key -> dict
        self.errors = set()   # keys whose captured body is an error payload (served as 404)
        self.metadata = None  # $metadata XML bytes
        self._load(os.path.join(MOCKUP_DIR, name))

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


def first_member(m, collection_link):
    coll = m.get(collection_link)
    if not coll or not coll.get("Members"):
        return None
    return odata_id(coll["Members"][0])


def load_registry_file(name):
    with open(os.path.join(SYNTHETIC_DIR, name + ".json")) as f:
        return json.load(f)


class Layout:
    """Where the stateful resources of one mockup live (links as the mockup writes them)."""

    def __init__(self, m, vendor):
        root = m.get("/redfish/v1")
        self.root = root
        self.sessions = odata_id(root.get("Links", {}).get("Sessions")) or \
            odata_id((m.get(odata_id(root.get("SessionService"))) or {}).get("Sessions"))
        self.session_service = odata_id(root.get("SessionService"))
        self.system = first_member(m, odata_id(root.get("Systems")))
        self.manager = first_member(m, odata_id(root.get("Managers")))
        self.update_service = odata_id(root.get("UpdateService"))
        self.task_service = odata_id(root.get("Tasks"))
        ts = m.get(self.task_service) or {}
        self.tasks = odata_id(ts.get("Tasks"))
        self.registries = odata_id(root.get("Registries"))
        sysres = m.get(self.system)
        act = sysres.get("Actions", {}).get("#ComputerSystem.Reset", {})
        self.reset_target = act.get("target")
        self.reset_values = act.get("ResetType@Redfish.AllowableValues")
        if self.reset_values is None and act.get("@Redfish.ActionInfo"):
            info = m.get(act["@Redfish.ActionInfo"]) or {}
            for p in info.get("Parameters", []):
                if p.get("Name") == "ResetType":
                    self.reset_values = p.get("AllowableValues")
        mgr = m.get(self.manager) or {}
        mact = mgr.get("Actions", {}).get("#Manager.Reset", {})
        self.manager_reset_target = mact.get("target")
        self.bios = odata_id(sysres.get("Bios"))
        bios = m.get(self.bios) or {}
        self.bios_settings = odata_id(bios.get("@Redfish.Settings", {}).get("SettingsObject"))
        us = m.get(self.update_service) or {}
        self.firmware = odata_id(us.get("FirmwareInventory"))
        self.simple_update = us.get("Actions", {}).get("#UpdateService.SimpleUpdate", {}).get("target")
        self.transfer_protocols = us.get("Actions", {}).get("#UpdateService.SimpleUpdate", {}).get(
            "TransferProtocol@Redfish.AllowableValues")
        self.multipart = us.get("MultipartHttpPushUri")
        self.max_image = us.get("MaxImageSizeBytes")
        self.registry_name = bios.get("AttributeRegistry")
        self.features = root.get("ProtocolFeaturesSupported", {})


def _add_member(m, coll_link, member_link):
    coll = m.get(coll_link)
    coll["Members"].append({"@odata.id": member_link})
    coll["Members@odata.count"] = len(coll["Members"])


def apply_additions(m, vendor):
    """Emulator additions, documented in README.md ("What the emulator adds to the mockups")."""
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
        bios = m.get(odata_id(system.get("Bios")))
        bios["Attributes"].update({"SriovGlobalEnable": "Disabled", "WorkloadProfile": "GeneralPowerEfficientCompute",
                                   "IommuEnable": True, "SystemSerialNumber": "437XR1138R2"})
        bios["@Redfish.Settings"]["SupportedApplyTimes"] = ["OnReset"]
        bios["@Redfish.Settings"]["Messages"] = []
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
    k = (vendor, mockup_name)
    if k not in _CACHE:
        m = Mockup(mockup_name, case_insensitive)
        apply_additions(m, vendor)
        _CACHE[k] = (m, Layout(m, vendor))
    return _CACHE[k]


def deep(obj):
    return copy.deepcopy(obj)
