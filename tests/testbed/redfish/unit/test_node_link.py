"""A BMC linked to a testbed node (bmc up --tb), against a stand-in for the node: its ctl/status
and ctl/boot_id files, and a `tb ctl` that changes them and logs each action. Checks that
boots come from the node, whoever rebooted it (pending BIOS and staged firmware apply at the
node's next boot, an in-band reboot included), and that node actions reach the node one at a
time, in order, with PowerState saying what the node did: a ForceOff held on its way to the node
(the hold_node fault) is never overtaken by a later On. No timing: the tests wait for states."""

import asyncio
import base64
import json
import os
import shutil
import stat
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rfemu import control, mockup  # noqa: E402
from rfemu.emulator import Emulator  # noqa: E402
from rfemu.http import Request  # noqa: E402

HAVE_MOCKUPS = os.path.isdir(os.path.join(mockup.mockup_dir(), "public-rackmount1"))
NO_MOCKUPS = "Redfish mockups (third-party data) not found in %s" % mockup.mockup_dir()

# The node: poweroff -> off; poweron of an off node and reboot -> a new boot_id, then up.
FAKE_TB_CTL = r"""#!/bin/bash
d=$(dirname "$0")/nodes/$2/ctl
echo "$1" >>"$d/actions"
boot() { echo "boot-$RANDOM$RANDOM" >"$d/boot_id.tmp"; mv "$d/boot_id.tmp" "$d/boot_id"; echo up >"$d/status"; }
case $1 in
  poweroff) echo off >"$d/status" ;;
  poweron) [ "$(cat "$d/status")" = off ] && boot ;;
  reboot) boot ;;
esac
exit 0
"""
SYS = "/redfish/v1/Systems/437XR1138R2"
AUTH = "Basic " + base64.b64encode(b"admin:pw").decode()


class NodeLink(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.ctl = os.path.join(self.dir, "nodes", "n1", "ctl")
        os.makedirs(self.ctl)
        self.write("status", "up")
        self.write("boot_id", "boot-0")
        tb = os.path.join(self.dir, "tb-ctl")
        with open(tb, "w") as f:
            f.write(FAKE_TB_CTL)
        os.chmod(tb, stat.S_IRWXU)
        self.emu = Emulator({
            "bmcs": [{"name": "n1", "vendor": "dmtf", "password": "pw", "node": "n1",
                      "node_status": os.path.join(self.ctl, "status"),
                      "node_boot_id": os.path.join(self.ctl, "boot_id"),
                      "options": {"power_delay": 0.01, "fw_apply": "on-reset", "task_duration": 0.01}}],
            "node_ctl": [tb]})
        self.bmc = self.emu.bmcs["n1"]

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, name, text):
        with open(os.path.join(self.ctl, name + ".tmp"), "w") as f:
            f.write(text + "\n")
        os.replace(os.path.join(self.ctl, name + ".tmp"), os.path.join(self.ctl, name))

    def read(self, name):
        try:
            with open(os.path.join(self.ctl, name)) as f:
                return f.read().split()
        except OSError:
            return []

    async def call(self, method, path, body=None):
        headers = {"authorization": AUTH, "content-type": "application/json"}
        if method == "PATCH":
            headers["if-match"] = "*"   # dmtf takes it on a PATCH, refuses it on an action (412)
        r = await self.bmc.handle(Request(method, path, headers, json.dumps(body).encode() if body else b"", None))
        return r.status, (json.loads(r.body) if r.body else None)

    async def get(self, path, field):
        return (await self.call("GET", path))[1][field]

    async def until(self, what, cond):
        """Waits for a state (not for a time); the bound only keeps a broken run from hanging."""
        for _ in range(3000):
            if cond():
                return
            await asyncio.sleep(0.01)
        self.fail("never reached: " + what)

    def run_async(self, coro):
        async def main():
            try:
                await coro
            finally:
                # A failed check must not leave a node action on its way: asyncio.run would
                # cancel it, and cancelling a subprocess being started hangs.
                self.bmc.node_hold.clear()
                for _ in range(3000):
                    if self.bmc.node_busy == 0:
                        break
                    await asyncio.sleep(0.01)
        asyncio.run(main())

    @unittest.skipUnless(HAVE_MOCKUPS, NO_MOCKUPS)
    def test_in_band_reboot_applies_pending_bios_and_staged_firmware(self):
        async def t():
            st, _ = await self.call("PATCH", SYS + "/Bios/Settings", {"Attributes": {"ProcTurboMode": "Disabled"}})
            self.assertEqual(st, 204)
            fw = next(k for k in self.bmc.fw_members if self.bmc.m.resources[k].get("Id") == "BMC")
            link = self.bmc.m.resources[fw]["@odata.id"]
            st = self.bmc._start_update("BMC-9.9.9", [link], None, "ImageURI", "SimpleUpdate").status
            self.assertEqual(st, 202)
            await self.until("the update staged", lambda: self.bmc.fw_staged.get(fw) == "9.9.9")
            # Requests without a boot apply nothing.
            self.assertEqual((await self.get(SYS + "/Bios", "Attributes"))["ProcTurboMode"], "Enabled")
            self.assertEqual((await self.get(SYS + "/Bios/Settings", "Attributes"))["ProcTurboMode"], "Disabled")
            # The node reboots on its own (an in-band `reboot`): a new boot_id, nothing from the BMC.
            self.write("boot_id", "boot-1")
            self.assertEqual((await self.get(SYS + "/Bios", "Attributes"))["ProcTurboMode"], "Disabled")
            self.assertEqual(self.bmc.primary.bios_pending, {})
            self.assertEqual(self.bmc.fw_version[fw], "9.9.9")
            self.assertEqual(self.bmc.fw_staged, {})
            self.assertEqual(self.bmc.primary.boots, 1)
            self.assertEqual(self.read("actions"), [])   # the BMC did nothing to the node
        self.run_async(t())

    @unittest.skipUnless(HAVE_MOCKUPS, NO_MOCKUPS)
    def test_a_boot_before_the_patch_does_not_apply_it(self):
        async def t():
            self.write("boot_id", "boot-1")   # the node booted; the BMC has not been asked since
            st, _ = await self.call("PATCH", SYS + "/Bios/Settings", {"Attributes": {"ProcTurboMode": "Disabled"}})
            self.assertEqual(st, 204)
            self.assertEqual((await self.get(SYS + "/Bios", "Attributes"))["ProcTurboMode"], "Enabled")
            self.assertEqual(self.bmc.primary.bios_pending, {"ProcTurboMode": "Disabled"})
            self.write("boot_id", "boot-2")
            self.assertEqual((await self.get(SYS + "/Bios", "Attributes"))["ProcTurboMode"], "Disabled")
        self.run_async(t())

    @unittest.skipUnless(HAVE_MOCKUPS, NO_MOCKUPS)
    def test_redfish_restart_applies_at_the_node_boot(self):
        async def t():
            await self.call("PATCH", SYS + "/Bios/Settings", {"Attributes": {"ProcTurboMode": "Disabled"}})
            st, _ = await self.call("POST", SYS + "/Actions/ComputerSystem.Reset", {"ResetType": "ForceRestart"})
            self.assertEqual(st, 204)
            await self.until("the restart done", lambda: self.bmc.node_busy == 0)
            self.assertEqual(self.read("actions"), ["reboot"])
            self.assertEqual(await self.get(SYS, "PowerState"), "On")
            self.assertEqual((await self.get(SYS + "/Bios", "Attributes"))["ProcTurboMode"], "Disabled")
            self.assertEqual(self.bmc.primary.boots, 1)
        self.run_async(t())

    @unittest.skipUnless(HAVE_MOCKUPS, NO_MOCKUPS)
    def test_force_off_held_on_its_way_is_not_overtaken_by_on(self):
        async def t():
            control.set_faults(self.emu, self.bmc, {"hold_node": "poweroff"})
            st, _ = await self.call("POST", SYS + "/Actions/ComputerSystem.Reset", {"ResetType": "ForceOff"})
            self.assertEqual(st, 204)
            await self.until("the poweroff held", lambda: self.bmc.node_waiting == ["poweroff"])
            # The node still runs: the BMC does not say Off, and refuses an On meanwhile.
            self.assertEqual(await self.get(SYS, "PowerState"), "PoweringOff")
            st, body = await self.call("POST", SYS + "/Actions/ComputerSystem.Reset", {"ResetType": "On"})
            self.assertEqual(st, 409, body)
            # The power button pressed On meanwhile (control API): it goes after the held off.
            r = await control.handle(self.emu, Request("POST", "/bmcs/n1/power", {},
                                                       b'{"state": "On"}', None))
            self.assertEqual(r.status, 200)
            self.assertEqual(self.read("actions"), [])
            control.set_faults(self.emu, self.bmc, {"hold_node": ""})
            await self.until("both actions done", lambda: self.bmc.node_busy == 0)
            self.assertEqual(self.read("actions"), ["poweroff", "poweron"])
            self.assertEqual(self.read("status"), ["up"])
            self.assertEqual(await self.get(SYS, "PowerState"), "On")
            self.assertEqual([e.get("settled") for e in self.bmc.node_events], [True, True])
        self.run_async(t())

    @unittest.skipUnless(HAVE_MOCKUPS, NO_MOCKUPS)
    def test_power_state_is_off_only_once_the_node_is(self):
        async def t():
            control.set_faults(self.emu, self.bmc, {"hold_node": "poweroff"})
            await self.call("POST", SYS + "/Actions/ComputerSystem.Reset", {"ResetType": "ForceOff"})
            await self.until("the poweroff held", lambda: self.bmc.node_waiting == ["poweroff"])
            self.assertNotEqual(await self.get(SYS, "PowerState"), "Off")
            control.clear_faults(self.bmc)   # clearing the faults lets it go too
            await self.until("the poweroff done", lambda: self.bmc.node_busy == 0)
            self.assertEqual(self.read("status"), ["off"])
            self.assertEqual(await self.get(SYS, "PowerState"), "Off")
            st, _ = await self.call("POST", SYS + "/Actions/ComputerSystem.Reset", {"ResetType": "On"})
            self.assertEqual(st, 204)
            await self.until("the poweron done", lambda: self.bmc.node_busy == 0)
            self.assertEqual(self.read("actions"), ["poweroff", "poweron"])
            self.assertEqual(await self.get(SYS, "PowerState"), "On")
            # The node powered off behind the BMC's back (in-band halt): read as Off.
            self.write("status", "off")
            self.assertEqual(await self.get(SYS, "PowerState"), "Off")
        self.run_async(t())

    @unittest.skipUnless(HAVE_MOCKUPS, NO_MOCKUPS)
    def test_a_reset_right_after_another_sees_its_transition(self):
        async def t():
            # Both handled before the ForceOff's task first runs (no await in between).
            st1, _ = await self.call("POST", SYS + "/Actions/ComputerSystem.Reset", {"ResetType": "ForceOff"})
            st2, _ = await self.call("POST", SYS + "/Actions/ComputerSystem.Reset", {"ResetType": "On"})
            self.assertEqual((st1, st2), (204, 409))   # not an On taken as "already on" and dropped
            await self.until("the poweroff done", lambda: self.bmc.node_busy == 0)
            self.assertEqual(await self.get(SYS, "PowerState"), "Off")
        self.run_async(t())

    def test_hold_node_names_a_node_action(self):
        bmc = type("B", (), {})()
        with self.assertRaises(ValueError):
            control.set_faults(None, bmc, {"hold_node": "poweroff,explode"})


if __name__ == "__main__":
    unittest.main()
