"""Unit tests of the emulator's pure parts: image naming convention, multipart parsing,
BIOS registry validation, vendor profiles, mockup path normalization."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rfemu import bios, mockup, profiles, updates  # noqa: E402

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


class Paths(unittest.TestCase):
    def test_ilo_paths_case_insensitive_trailing_slash(self):
        m, layout = mockup.load("ilo", "XL675d_A100", True)
        self.assertIs(m.get("/redfish/v1/systems/1/bios/"), m.get("/redfish/v1/Systems/1/BIOS"))
        self.assertEqual(layout.bios_settings, "/redfish/v1/systems/1/bios/settings/")
        self.assertIn(m.key("/redfish/v1/Chassis/1/PCIeDevices/239/"), m.errors)

    def test_openbmc_layout_from_links(self):
        _m, layout = mockup.load("openbmc", "OpenBMC-stock", False)
        self.assertEqual(layout.system, "/redfish/v1/Systems/system")
        self.assertIn("ForceRestart", layout.reset_values)   # from ResetActionInfo
        self.assertEqual(layout.multipart, "/redfish/v1/UpdateService/update")


if __name__ == "__main__":
    unittest.main()
