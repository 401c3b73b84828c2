"""Unit tests of the emulator's pure parts: image naming convention, multipart parsing,
BIOS registry validation, vendor profiles, mockup path normalization, and (on the shared
third-party mockups, skipped with a message when they are absent) the layouts, action
parameters and per-BMC state of the vendor-neutral mode."""

import asyncio
import json
import copy
import datetime
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rfemu import bios, mockup, profiles, updates  # noqa: E402
from rfemu.bmc import Bmc  # noqa: E402

MOCKUPS = mockup.mockup_dir()
HAVE_MOCKUPS = os.path.isdir(os.path.join(MOCKUPS, "EX235n"))
NO_MOCKUPS = ("Redfish mockups (third-party data) not found in %s: put them in ../shared/redfish-mockups/ "
              "next to the source tree or set PLUMB_REDFISH_MOCKUPS" % MOCKUPS)

ILO_FW = [("/fw/1", {"Id": "1", "Name": "iLO 5"}),
          ("/fw/2", {"Id": "2", "Name": "System ROM"}),
          ("/fw/10", {"Id": "10", "Name": "Redundant System ROM"}),
          ("/fw/5", {"Id": "5", "Name": "Power Supply Firmware"}),
          ("/fw/6", {"Id": "6", "Name": "Power Supply Firmware"}),
          ("/fw/27", {"Id": "27", "Name": ""})]
DMTF_FW = [("/fw/BMC", {"Id": "BMC", "Name": "Contoso BMC Firmware", "SoftwareId": "1624A9DF"}),
           ("/fw/AC-RoT0", {"Id": "AC-RoT0", "Name": "RoT"})]


class ImageConvention(unittest.TestCase):
    def test_stem_drops_extension_and_decodes(self):
        self.assertEqual(updates.image_stem("http://x.example/fw/System%20ROM-A47%20v2.60.bin"),
                         "System ROM-A47 v2.60")
        self.assertEqual(updates.image_stem("BMC-1.2.3"), "BMC-1.2.3")  # no letters-only extension
        self.assertEqual(updates.image_stem("BMC-1.2.3.fwpkg"), "BMC-1.2.3")

    def test_longest_name_wins(self):
        self.assertEqual(updates.resolve("Redundant System ROM-A47 v2", ILO_FW, [], str), ("/fw/10", "A47 v2"))
        self.assertEqual(updates.resolve("System ROM-A47 v2", ILO_FW, [], str), ("/fw/2", "A47 v2"))

    def test_id_software_id_and_dash_in_component(self):
        self.assertEqual(updates.resolve("BMC-2.0-rc1", DMTF_FW, [], str), ("/fw/BMC", "2.0-rc1"))
        self.assertEqual(updates.resolve("1624A9DF-9", DMTF_FW, [], str), ("/fw/BMC", "9"))
        self.assertEqual(updates.resolve("AC-RoT0-7.1", DMTF_FW, [], str), ("/fw/AC-RoT0", "7.1"))

    def test_targets_choose_the_component(self):
        self.assertEqual(updates.resolve("Power Supply Firmware-3.12", ILO_FW, ["/fw/6"], str), ("/fw/6", "3.12"))
        self.assertEqual(updates.resolve("whatever-4.0", ILO_FW, ["/fw/1"], str), ("/fw/1", "4.0"))
        self.assertIsNone(updates.resolve("x-1", ILO_FW, ["/fw/99"], str)[0])

    def test_version_in_the_inventorys_own_form(self):
        day = datetime.date(2024, 6, 1)
        self.assertEqual(updates.vendor_form("2.80", "2.70 May 16 2022", day), "2.80 Jun 01 2024")
        self.assertEqual(updates.vendor_form("A47 v2.60", "A47 v2.58 (05/19/2022)", day), "A47 v2.60 (06/01/2024)")
        self.assertEqual(updates.vendor_form("1.3", "1.2 (2022-05-19)", day), "1.3 (2024-06-01)")
        # An image that names its date keeps it; a member without a date gets none.
        self.assertEqual(updates.vendor_form("A47 v2.60 (01/02/2024)", "A47 v2.58 (05/19/2022)", day),
                         "A47 v2.60 (01/02/2024)")
        self.assertEqual(updates.vendor_form("24.09.17", "24.01.01", day), "24.09.17")
        self.assertEqual(updates.vendor_form("2.0", None, day), "2.0")

    def test_unknown_or_empty_version_refused(self):
        self.assertIsNone(updates.resolve("NoSuch-1.0", DMTF_FW, [], str)[0])
        self.assertIsNone(updates.resolve("BMC-", DMTF_FW, [], str)[0])
        self.assertIsNone(updates.resolve("-1.0", ILO_FW, [], str)[0])  # the nameless member never matches


class Multipart(unittest.TestCase):
    def test_parts(self):
        body = (b"--XyZ\r\nContent-Disposition: form-data; name=\"UpdateParameters\"\r\n"
                b"Content-Type: application/json\r\n\r\n{\"Targets\":[]}\r\n"
                b"--XyZ\r\nContent-Disposition: form-data; name=\"UpdateFile\"; filename=\"BMC-1.bin\"\r\n"
                b"Content-Type: application/octet-stream\r\n\r\n\x00\r\n\x01--\r\n--XyZ--\r\n")
        parts = updates.parse_multipart("multipart/form-data; boundary=XyZ", body)
        self.assertEqual(parts["UpdateParameters"][2], b'{"Targets":[]}')
        self.assertEqual(parts["UpdateFile"][0], "BMC-1.bin")
        self.assertEqual(parts["UpdateFile"][2], b"\x00\r\n\x01--")

    def test_no_boundary(self):
        self.assertIsNone(updates.parse_multipart("multipart/form-data", b"x"))


class Registry(unittest.TestCase):
    reg = bios.Registry(mockup.load_registry_file("BiosAttributeRegistryP89.v1_0_0"))

    def ids(self, changes):
        return [m["MessageId"].rsplit(".", 1)[1] for m in self.reg.validate(changes)]

    def test_valid(self):
        self.assertEqual(self.ids({"ProcTurboMode": "Disabled", "ProcCoreDisable": 4,
                                   "IommuEnable": False, "AdminPhone": "555"}), [])

    def test_each_violation(self):
        self.assertEqual(self.ids({"Nope": 1}), ["PropertyUnknown"])
        self.assertEqual(self.ids({"SystemSerialNumber": "x"}), ["PropertyNotWritable"])
        self.assertEqual(self.ids({"ProcTurboMode": "Sometimes"}), ["PropertyValueNotInList"])
        self.assertEqual(self.ids({"ProcTurboMode": 1}), ["PropertyValueTypeError"])
        self.assertEqual(self.ids({"ProcCoreDisable": "4"}), ["PropertyValueTypeError"])
        self.assertEqual(self.ids({"ProcCoreDisable": True}), ["PropertyValueTypeError"])
        self.assertEqual(self.ids({"ProcCoreDisable": 65}), ["PropertyValueOutOfRange"])
        self.assertEqual(self.ids({"IommuEnable": "true"}), ["PropertyValueTypeError"])
        self.assertEqual(self.ids({"AdminPhone": "9" * 33}), ["PropertyValueFormatError"])

    def test_all_errors_reported_with_related_property(self):
        msgs = self.reg.validate({"Nope": 1, "ProcTurboMode": "x"})
        self.assertEqual(len(msgs), 2)
        self.assertIn("/Attributes/ProcTurboMode", [m["RelatedProperties"][0] for m in msgs])

    def test_password_values_not_echoed(self):
        reg = bios.Registry({"RegistryEntries": {"Attributes": [
            {"AttributeName": "AdminPassword", "Type": "Password", "MaxLength": 4}]}})
        msgs = reg.validate({"AdminPassword": "s3cret-planted"})
        self.assertEqual(len(msgs), 1)
        self.assertNotIn("s3cret-planted", repr(msgs))


class Profiles(unittest.TestCase):
    def test_override_and_unknown(self):
        self.assertEqual(profiles.profile("ilo", {"page_size": 3})["page_size"], 3)
        self.assertEqual(profiles.profile("openbmc")["if_match"], "required")
        with self.assertRaises(ValueError):
            profiles.profile("ilo", {"no_such_option": 1})
        with self.assertRaises(ValueError):
            profiles.profile("supermicro")
        with self.assertRaises(ValueError):
            profiles.profile("neutral")   # names no mockup
        p = profiles.profile("neutral:EX235n", {"inventory_lag": 2})
        self.assertEqual((p["mockup"], p["case_insensitive"], p["inventory_lag"]), ("EX235n", True, 2))


@unittest.skipUnless(HAVE_MOCKUPS, NO_MOCKUPS)
class Paths(unittest.TestCase):
    def test_ilo_paths_case_insensitive_trailing_slash(self):
        m, layout = mockup.load("ilo", "XL675d_A100", True)
        self.assertIs(m.get("/redfish/v1/systems/1/bios/"), m.get("/redfish/v1/Systems/1/BIOS"))
        self.assertEqual(layout.systems[0].bios_settings, "/redfish/v1/systems/1/bios/settings/")
        self.assertIn(m.key("/redfish/v1/Chassis/1/PCIeDevices/239/"), m.errors)

    def test_openbmc_layout_from_links(self):
        m, layout = mockup.load("openbmc", "OpenBMC-stock", False)
        self.assertEqual(layout.system, "/redfish/v1/Systems/system")
        reset = layout.actions[m.key(layout.systems[0].reset_target)]
        self.assertIn("ForceRestart", reset.allowable("ResetType"))   # from ResetActionInfo
        self.assertEqual(layout.multipart, "/redfish/v1/UpdateService/update")

    def test_missing_mockup_names_the_data_and_where(self):
        with self.assertRaises(mockup.MockupMissing) as e:
            mockup.Mockup("NoSuchMockup", False)
        self.assertIn("NoSuchMockup", str(e.exception))
        self.assertIn("PLUMB_REDFISH_MOCKUPS", str(e.exception))


def neutral(name):
    return mockup.load("neutral:" + name, name, True)


@unittest.skipUnless(HAVE_MOCKUPS, NO_MOCKUPS)
class NeutralLayouts(unittest.TestCase):
    """Each shared mockup as it is: where its systems, BIOS writes and firmware are."""

    def test_cray_ex_two_systems_bios_in_place(self):
        _m, layout = neutral("EX235n")
        self.assertEqual([s.id for s in layout.systems], ["Node0", "Node1"])
        self.assertEqual({s.settings_mode for s in layout.systems}, {"in-place"})
        self.assertEqual(len(layout.firmware_members), 30)

    def test_ami_settings_without_settings_object_is_patch_only_sd(self):
        _m, layout = neutral("Gigabyte")
        s = layout.systems[0]
        self.assertEqual(s.settings_mode, "patch-only")
        self.assertEqual(s.bios_settings, "/redfish/v1/Systems/Self/Bios/SD")
        self.assertIsNotNone(s.registry)   # BiosAttributeRegistry.json, through Registries

    def test_settings_object_and_no_bios_attributes(self):
        self.assertEqual(neutral("public-rackmount1")[1].systems[0].settings_mode, "object")
        self.assertEqual(neutral("XL675d_A100")[1].systems[0].settings_mode, "object")
        self.assertEqual(neutral("OpenBMC-stock")[1].systems[0].settings_mode, "in-place")


@unittest.skipUnless(HAVE_MOCKUPS, NO_MOCKUPS)
class ActionParameters(unittest.TestCase):
    """ActionInfo and inline AllowableValues, as a BMC that enforces them answers."""

    def ids(self, spec, body, key_of):
        return [m["MessageId"].rsplit(".", 1)[1] for m in spec.validate(body, key_of)]

    def test_ami_simple_update_action_info(self):
        m, layout = neutral("Gigabyte")
        spec = layout.actions[m.key("/redfish/v1/UpdateService/Actions/SimpleUpdate")]
        ok = {"ImageURI": "http://fw.example/BMC-1.bin", "TransferProtocol": "HTTP"}
        self.assertEqual(self.ids(spec, ok, m.key), [])
        self.assertEqual(self.ids(spec, {"ImageURI": "x"}, m.key), ["ActionParameterMissing"])
        self.assertEqual(self.ids(spec, dict(ok, TransferProtocol="HTTPS"), m.key),
                         ["ActionParameterValueNotInList"])
        self.assertEqual(self.ids(spec, dict(ok, Targets=["/x"]), m.key), ["ActionParameterUnknown"])
        self.assertEqual(self.ids(spec, dict(ok, **{"@Redfish.OperationApplyTime": "Immediate"}), m.key), [])

    def test_targets_allowable_links_and_reset_values(self):
        m, layout = neutral("EX235n")
        spec = layout.actions[m.key("/redfish/v1/UpdateService/Actions/SimpleUpdate")]
        body = {"ImageURI": "https://fw.example/BIOS-2.bin", "TransferProtocol": "HTTPS",
                "Targets": ["/redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS"]}
        self.assertEqual(self.ids(spec, body, m.key), [])
        body["Targets"].append("/redfish/v1/UpdateService/FirmwareInventory/Node1.HPCNet0")
        self.assertEqual(self.ids(spec, body, m.key), ["ActionParameterValueNotInList"])
        reset = layout.actions[m.key("/redfish/v1/Systems/Node1/Actions/ComputerSystem.Reset")]
        self.assertEqual(self.ids(reset, {"ResetType": "Off"}, m.key), [])
        self.assertEqual(self.ids(reset, {"ResetType": "GracefulRestart"}, m.key),
                         ["ActionParameterValueNotInList"])

    def test_inline_allowable_values_without_action_info(self):
        m, layout = neutral("public-rackmount1")
        reset = layout.actions[m.key(layout.systems[0].reset_target)]
        self.assertFalse(reset.declared)
        self.assertEqual(self.ids(reset, {"ResetType": "PowerCycle"}, m.key), ["ActionParameterValueNotInList"])
        self.assertEqual(self.ids(reset, {"ResetType": "On", "Force": 1}, m.key), ["ActionParameterUnknown"])


class FakeEmulator:
    def warn(self, text):
        pass


@unittest.skipUnless(HAVE_MOCKUPS, NO_MOCKUPS)
class PerBmcState(unittest.TestCase):
    """BMCs serving the same mockup (and the systems of one BMC) keep their state apart."""

    def bmc(self, name, vendor):
        return Bmc({"name": name, "vendor": vendor, "password": "pw"}, FakeEmulator())

    def test_cray_object_values_and_two_systems(self):
        a, b = self.bmc("a", "neutral:EX235n"), self.bmc("b", "neutral:EX235n")
        node1 = a.systems[1]
        self.assertEqual(node1.patch_bios({"Attributes": {"Core Performance Boost": "Disabled"}}), [])
        self.assertEqual(node1.patch_bios({"Attributes": {"Core Performance Boost": "Maybe"}})[0]["MessageId"],
                         "Base.1.18.PropertyValueNotInList")
        node1.boot()
        attrs = node1.render_bios()[0]["Attributes"]
        self.assertEqual(attrs["Core Performance Boost"]["current_value"], "Disabled")
        self.assertEqual(attrs["Core Performance Boost"]["AllowableValues"], ["Disabled", "Enabled"])
        for other in (a.systems[0], b.systems[1]):
            self.assertEqual(other.render_bios()[0]["Attributes"]["Core Performance Boost"]["current_value"],
                             "Enabled")
        self.assertEqual(a.m.get(node1.layout.bios)["Attributes"]["Core Performance Boost"]["current_value"],
                         "Enabled")   # the shared mockup itself is untouched

    def test_ami_settings_messages_kept_until_an_apply(self):
        a, b = self.bmc("a", "neutral:Gigabyte"), self.bmc("b", "neutral:Gigabyte")
        rs = a.primary.render_bios()[0]["@Redfish.Settings"]
        self.assertEqual(rs["Messages"], [{"MessageId": "Base.1.0.SettingsFailed"}])
        self.assertNotIn("SettingsObject", rs)
        self.assertEqual(a.primary.patch_bios({"Attributes": {"GBT0001": "Disabled"}}), [])
        a.primary.boot()
        self.assertEqual(a.primary.bios_current["GBT0001"], "Disabled")
        self.assertEqual(b.primary.bios_current["GBT0001"], "Enabled")
        self.assertEqual(b.primary.render_bios()[0]["@Redfish.Settings"]["Messages"][0]["MessageId"],
                         "Base.1.0.SettingsFailed")

    def test_no_bios_attributes_refuses_every_name(self):
        obmc = self.bmc("o", "neutral:OpenBMC-stock")
        errs = obmc.primary.patch_bios({"Attributes": {"ProcTurboMode": "Disabled"}})
        self.assertEqual([e["MessageId"] for e in errs], ["Base.1.18.PropertyUnknown"])

    def test_update_without_task_service_updates_every_target(self):
        """No TaskService (crashed SimpleUpdate before): 200 with no task; all Targets change."""
        b = Bmc({"name": "i", "vendor": "neutral:XL675d_A100", "password": "pw",
                 "options": {"task_duration": 0.05}}, FakeEmulator())
        b.L = copy.copy(b.L)
        b.L.tasks = b.L.task_service = None
        psus = [k for k in b.fw_members if b.m.resources[k].get("Name") == "Power Supply Firmware"]
        self.assertEqual(len(psus), 4)
        links = [b.m.resources[k]["@odata.id"] for k in psus]

        async def update():
            r = b._start_update("Power Supply Firmware-9.99", links, None, "ImageURI", "SimpleUpdate")
            await asyncio.sleep(0.3)
            return r
        r = asyncio.run(update())
        self.assertEqual(r.status, 200)
        self.assertEqual([b.fw_version[k] for k in psus], ["9.99"] * 4)
        self.assertEqual(b.tasks, {})

    def test_update_reports_the_version_in_the_mockups_form(self):
        """iLO appends the build date to Version: an update must too (it reported exactly the
        pinned text, which hid that a pin never matched the real form)."""
        b = self.bmc("i", "neutral:XL675d_A100")
        ilo = [k for k in b.fw_members if b.m.resources[k].get("Name") == "iLO 5"][0]
        rom = [k for k in b.fw_members if b.m.resources[k].get("Name") == "System ROM"][0]

        async def update():
            for stem in ("iLO 5-2.80", "System ROM-A47 v2.60"):
                r = b._start_update(stem, None, "Immediate", "ImageURI", "SimpleUpdate")
                self.assertIn(r.status, (200, 202))
            self.assertEqual(len(b.tasks), 2)
            for t in list(b.tasks.values()):   # finished now, not after task_duration
                b._finish_task(t, {k: False for k, _v in t.components})
        asyncio.run(update())
        self.assertRegex(b.fw_version[ilo], r"^2\.80 [A-Z][a-z]{2} \d{2} \d{4}$")
        self.assertRegex(b.fw_version[rom], r"^A47 v2\.60 \(\d{2}/\d{2}/\d{4}\)$")

    def test_every_target_of_an_update(self):
        members = [("/fw/5", {"Id": "5", "Name": "Power Supply Firmware"}),
                   ("/fw/6", {"Id": "6", "Name": "Power Supply Firmware"})]
        self.assertEqual(updates.resolve_all("Power Supply Firmware-3.12", members, ["/fw/5", "/fw/6"], str),
                         [("/fw/5", "3.12"), ("/fw/6", "3.12")])
        self.assertEqual(updates.resolve_all("Power Supply Firmware-3.12", members, ["/fw/5", "/fw/9"], str), [])


@unittest.skipUnless(HAVE_MOCKUPS, NO_MOCKUPS)
class TaskFaults(unittest.TestCase):
    """The update-task faults plumb's outcome tests lean on (README "Faults")."""

    def dmtf(self):
        return Bmc({"name": "d", "vendor": "dmtf", "password": "pw",
                    "options": {"task_duration": 0.05, "task_linger": 60}}, FakeEmulator())

    def update(self, b, version, settle=0.3):
        async def run():
            r = b._start_update("BMC-" + version, None, None, "ImageURI", "SimpleUpdate")
            await asyncio.sleep(settle)
            return r
        r = asyncio.run(run())
        self.assertEqual(r.status, 202)
        return list(b.tasks.values())[-1]

    def bmc_version(self, b):
        return next(v for k, v in b.fw_version.items() if k.lower().endswith("/bmc"))

    def test_task_critical_completes_critical_with_apply_failed(self):
        b = self.dmtf()
        before = self.bmc_version(b)
        b.faults["task_critical"] = 1
        t = self.update(b, "9.1.0")
        d = t.to_json()
        self.assertEqual((d["TaskState"], d["TaskStatus"]), ("Completed", "Critical"))
        self.assertEqual(d["Messages"][0]["MessageId"], "Update.1.0.ApplyFailed")
        self.assertEqual(self.bmc_version(b), before)
        self.assertEqual(b.faults["task_critical"], 0)

    def test_task_truncate_cuts_the_finished_answers(self):
        b = self.dmtf()
        b.faults["task_truncate"] = 1
        t = self.update(b, "9.2.0")
        for resp in (b._monitor(t), b._get(None, b.m.key(t.link))):
            self.assertEqual(resp.status, 200)
            with self.assertRaises(ValueError):
                json.loads(resp.body)
        self.assertEqual(self.bmc_version(b), "9.2.0")   # the update itself worked

    def test_monitor_error_answers_500_then_the_task(self):
        b = self.dmtf()
        b.faults["monitor_error"] = 1
        t = self.update(b, "9.3.0")
        self.assertEqual(b._monitor(t).status, 500)
        self.assertEqual(b._monitor(t).status, 200)

    def test_update_hold_keeps_the_task_running_until_cleared(self):
        b = self.dmtf()
        before = self.bmc_version(b)
        b.faults["update_hold"] = 1

        async def run():
            r = b._start_update("BMC-9.4.0", None, None, "ImageURI", "SimpleUpdate")
            await asyncio.sleep(0.4)
            t = list(b.tasks.values())[-1]
            held = (t.to_json()["TaskState"], b._monitor(t).status, self.bmc_version(b))
            b.faults["update_hold"] = 0
            await asyncio.sleep(0.5)
            return r, held, t
        r, held, t = asyncio.run(run())
        self.assertEqual(held, ("Running", 202, before))
        self.assertEqual(t.state, "Completed")
        self.assertEqual(self.bmc_version(b), "9.4.0")


class ListedAttributes(unittest.TestCase):
    def test_cray_object_values_describe_themselves(self):
        reg = bios.Registry.from_listing({
            "SMT": {"AllowableValues": ["Auto", "Disabled"], "DataType": "string", "current_value": "Auto"},
            "CrayTesting": {"DataType": "number", "MinimumValue": 0, "MaximumValue": 9, "current_value": "0"},
            "Plain": "x"})
        ids = lambda c: [m["MessageId"].rsplit(".", 1)[1] for m in reg.validate(c)]  # noqa: E731
        self.assertEqual(ids({"SMT": "Disabled", "CrayTesting": 5, "Plain": "y"}), [])
        self.assertEqual(ids({"CrayTesting": "7"}), [])   # listed as text: numeric text accepted
        self.assertEqual(ids({"SMT": "On"}), ["PropertyValueNotInList"])
        self.assertEqual(ids({"CrayTesting": 10}), ["PropertyValueOutOfRange"])
        self.assertEqual(ids({"Plain": 1, "Nope": "x"}), ["PropertyValueTypeError", "PropertyUnknown"])
        self.assertEqual(bios.current_of({"current_value": "Auto"}), "Auto")
        self.assertEqual(bios.render({"current_value": "Auto", "DataType": "string"}, "Off"),
                         {"current_value": "Off", "DataType": "string"})


if __name__ == "__main__":
    unittest.main()
