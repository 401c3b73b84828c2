"""System power (ComputerSystem.Reset), host boots (pending BIOS and staged firmware take
effect), the linked testbed node, and the BMC's own reboot (Manager.Reset). Mixed into Bmc.
ResetType values are checked against the action's AllowableValues/ActionInfo before these run
(actions.py)."""

import asyncio
import time

from . import messages as msg
from .http import Response

RESTARTS = ("ForceRestart", "GracefulRestart", "PowerCycle", "FullPowerCycle")


class PowerMixin:
    def _reset(self, req, sys):
        body, err = self._body_json(req)
        if err:
            return err
        rt = body.get("ResetType")
        if rt is None:
            return self._error(400, msg.message("ActionParameterMissing", "ComputerSystem.Reset", "ResetType"))
        if sys.power in ("PoweringOn", "PoweringOff"):
            return self._error(409, msg.message("ResourceInStandby"))
        on = sys.power == "On"
        if rt in ("On", "ForceOn"):
            plan = None if on else "on"
        elif rt == "ForceOff":
            plan = "forceoff" if on else None
        elif rt in ("GracefulShutdown", "Off"):   # "Off": HPE Cray EX's own value
            plan = "off" if on else None
        elif rt in RESTARTS:
            plan = "restart" if on else "on"
        elif rt == "PushPowerButton":
            plan = "off" if on else "on"
        else:
            plan = None  # Nmi, Suspend, Pause, Resume: no power state change here
        if plan:
            sys.power_task = asyncio.ensure_future(self._power(sys, plan))
        if self.p["reset_status"] == 200:
            return self._json(200, msg.success_info())
        return Response(204, b"", [("OData-Version", "4.0")])

    async def _node_ctl(self, sys, action):
        # Only the first system is the linked testbed node.
        if sys is self.primary:
            await self.emu.node_ctl(self, action)

    async def _power(self, sys, plan):
        d = float(self.p["power_delay"])
        if plan == "forceoff":
            sys.power = "Off"
            self.bump(sys.key)
            await self._node_ctl(sys, "poweroff")
            return
        if plan in ("off", "restart"):
            sys.power = "PoweringOff"
            self.bump(sys.key)
            await asyncio.sleep(d)
            if plan == "off":
                sys.power = "Off"
                self.bump(sys.key)
                await self._node_ctl(sys, "poweroff")
                return
            await self._node_ctl(sys, "reboot")
        else:
            await self._node_ctl(sys, "poweron")
        sys.power = "PoweringOn"
        self.boot(sys)
        await asyncio.sleep(d)
        sys.power = "On"
        self.bump(sys.key)

    def _sync_power(self, sys):
        if sys is not self.primary or not self.node_status or \
                sys.power in ("PoweringOn", "PoweringOff") or time.time() < self.sync_after:
            return
        try:
            with open(self.node_status) as f:
                node = f.read().strip()
        except OSError:
            return
        want = "Off" if node == "off" else "On" if node else sys.power
        if want != sys.power:
            if want == "On":
                self.boot(sys)
            sys.power = want
            self.bump(sys.key)

    def boot(self, sys=None):
        """A host (re)boot of `sys` (default: the first system): its pending BIOS settings and
        the BMC's staged firmware take effect."""
        sys = sys or self.primary
        sys.boot()
        for key, version in self.fw_staged.items():
            self.fw_version[key] = version
            self.bump(key)
        self.fw_staged = {}

    def _manager_reset(self, req):
        body, err = self._body_json(req)
        if err:
            return err
        asyncio.get_event_loop().call_later(0.2, lambda: asyncio.ensure_future(
            self.emu.bmc_down(self, float(self.p["bmc_reboot_seconds"]))))
        if self.p["reset_status"] == 200:
            return self._json(200, msg.success_info())
        return Response(204, b"", [("OData-Version", "4.0")])
