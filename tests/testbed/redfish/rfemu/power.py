"""System power (ComputerSystem.Reset), host boots (pending BIOS and staged firmware take
effect), the linked testbed node, and the BMC's own reboot (Manager.Reset). Mixed into Bmc."""

import asyncio
import time

from . import messages as msg
from . import updates
from .http import Response


class PowerMixin:
    def _allowed_reset(self, body, allowed, action):
        rt = body.get("ResetType")
        if rt is None:
            return None, self._error(400, msg.message("ActionParameterMissing", action, "ResetType"))
        if allowed is not None and rt not in allowed:
            return None, self._error(400, msg.message("ActionParameterValueNotInList", rt,
                                                      "ResetType", action))
        return rt, None

    def _reset(self, req):
        body, err = self._body_json(req)
        if err:
            return err
        rt, err = self._allowed_reset(body, self.L.reset_values, "ComputerSystem.Reset")
        if err:
            return err
        if self.power in ("PoweringOn", "PoweringOff"):
            return self._error(409, msg.message("ResourceInStandby"))
        on = self.power == "On"
        if rt in ("On", "ForceOn"):
            plan = None if on else "on"
        elif rt == "ForceOff":
            plan = "forceoff" if on else None
        elif rt == "GracefulShutdown":
            plan = "off" if on else None
        elif rt in ("ForceRestart", "GracefulRestart", "PowerCycle", "FullPowerCycle"):
            plan = "restart" if on else "on"
        elif rt == "PushPowerButton":
            plan = "off" if on else "on"
        else:
            plan = None  # Nmi, Suspend, Pause, Resume: no power state change here
        if plan:
            self.power_task = asyncio.ensure_future(self._power(plan))
        if self.p["reset_status"] == 200:
            return self._json(200, msg.success_info())
        return Response(204, b"", [("OData-Version", "4.0")])

    async def _power(self, plan):
        d = float(self.p["power_delay"])
        if plan == "forceoff":
            self.power = "Off"
            self.bump(self.k_system)
            await self.emu.node_ctl(self, "poweroff")
            return
        if plan in ("off", "restart"):
            self.power = "PoweringOff"
            self.bump(self.k_system)
            await asyncio.sleep(d)
            if plan == "off":
                self.power = "Off"
                self.bump(self.k_system)
                await self.emu.node_ctl(self, "poweroff")
                return
            await self.emu.node_ctl(self, "reboot")
        else:
            await self.emu.node_ctl(self, "poweron")
        self.power = "PoweringOn"
        self.boot()
        await asyncio.sleep(d)
        self.power = "On"
        self.bump(self.k_system)

    def _sync_power(self):
        if not self.node_status or self.power in ("PoweringOn", "PoweringOff") or \
                time.time() < self.sync_after:
            return
        try:
            with open(self.node_status) as f:
                node = f.read().strip()
        except OSError:
            return
        want = "Off" if node == "off" else "On" if node else self.power
        if want != self.power:
            if want == "On":
                self.boot()
            self.power = want
            self.bump(self.k_system)

    def boot(self):
        """A host (re)boot: pending BIOS settings and staged firmware take effect."""
        self.boots += 1
        self.bump(self.k_system)
        if self.bios_pending:
            self.bios_current.update(self.bios_pending)
            self.bios_messages = [dict(msg.message("Success", severity="OK"),
                                       RelatedProperties=["/Attributes/" + n for n in sorted(self.bios_pending)])]
            self.bios_pending = {}
            self.bios_apply_time = None
            self.bios_time = updates.now_iso()
            self.bump(self.k_bios)
            if self.k_settings:
                self.bump(self.k_settings)
        for key, version in self.fw_staged.items():
            self.fw_version[key] = version
            self.bump(key)
        self.fw_staged = {}

    def _manager_reset(self, req):
        body, err = self._body_json(req)
        if err:
            return err
        mgr = self.m.get(self.L.manager) or {}
        act = mgr.get("Actions", {}).get("#Manager.Reset", {})
        allowed = act.get("ResetType@Redfish.AllowableValues")
        if allowed is None and act.get("@Redfish.ActionInfo"):
            for p in (self.m.get(act["@Redfish.ActionInfo"]) or {}).get("Parameters", []):
                if p.get("Name") == "ResetType":
                    allowed = p.get("AllowableValues")
        if body.get("ResetType") is not None or allowed:
            _rt, err = self._allowed_reset(body, allowed, "Manager.Reset")
            if err:
                return err
        asyncio.get_event_loop().call_later(0.2, lambda: asyncio.ensure_future(
            self.emu.bmc_down(self, float(self.p["bmc_reboot_seconds"]))))
        if self.p["reset_status"] == 200:
            return self._json(200, msg.success_info())
        return Response(204, b"", [("OData-Version", "4.0")])
