"""System power (ComputerSystem.Reset), host boots (pending BIOS and staged firmware take
effect), the linked testbed node, and the BMC's own reboot (Manager.Reset). Mixed into Bmc.
ResetType values are checked against the action's AllowableValues/ActionInfo before these run
(actions.py).

A BMC linked to a testbed node (bmc up --tb: `node_status` and `node_boot_id` name the node's
ctl/status and ctl/boot_id, and `tb ctl` reaches it) models that node's host, not a timer:
- a boot is the node's boot, however it came about (a Redfish reset, `tb ctl`, an in-band
  `reboot`): a boot_id the BMC has not seen is a POST, where pending BIOS settings and
  firmware staged for the next reset take effect, as on real hardware. The files are read at
  each request (and control-API read), before the request acts, so a boot that happened before
  a BIOS PATCH never applies that PATCH, and one after it always does;
- PowerState is the node's: Off exactly when the node is off. While a reset's node action is
  on its way it reads PoweringOff/PoweringOn, and it turns Off (or On) only once the node is
  off (or has started booting), so a client that waits for Off before sending On cannot
  overtake the power-off;
- node actions run one at a time, in the order they were asked for (a per-BMC lock): an On
  queued behind a ForceOff reaches the node after it."""

import asyncio

from . import messages as msg
from .http import Response

RESTARTS = ("ForceRestart", "GracefulRestart", "PowerCycle", "FullPowerCycle")
NODE_ACTIONS = ("poweroff", "poweron", "reboot")


def _read(path):
    """A small state file's content, stripped; "" when it cannot be read."""
    if not path:
        return ""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


class PowerMixin:
    def _init_node_link(self, cfg):
        # Files holding the linked node's power as the testbed sees it (up|booting|down|off|hung)
        # and its current boot_id.
        self.node_status = cfg.get("node_status")
        self.node_boot_file = cfg.get("node_boot_id")
        self.node_boot_id = _read(self.node_boot_file)   # boots before the emulator started: not ours
        self.node_lock = asyncio.Lock()   # node actions, one at a time, first come first served
        self.node_busy = 0                # node actions asked for and not finished
        self.node_hold = set()            # fault hold_node: these actions wait before reaching the node
        self.node_waiting = []            # actions waiting at that hold now

    def _linked(self, sys):
        """Does `sys` follow a testbed node (its power and its boots)? Only the first system."""
        return sys is self.primary and bool(self.node and self.node_status and self.emu.node_ctl_cmd)

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
            self.start_power(sys, plan)
        if self.p["reset_status"] == 200:
            return self._json(200, msg.success_info())
        return Response(204, b"", [("OData-Version", "4.0")])

    def start_power(self, sys, plan):
        """Starts a power change (on | off | forceoff | restart) of `sys` in the background."""
        if self._linked(sys):
            # Now, not when the task first runs: a request handled before it runs must see the
            # transition (a reset then gets 409), and until the node shows the change, the
            # node's files must not be read back as the power state.
            self.node_busy += 1
            sys.power = "PoweringOff" if plan in ("off", "forceoff", "restart") else "PoweringOn"
            self.bump(sys.key)
            sys.power_task = asyncio.ensure_future(self._power_linked(sys, plan))
        else:
            sys.power_task = asyncio.ensure_future(self._power(sys, plan))

    async def _node_ctl(self, sys, action):
        # Only the first system is the linked testbed node.
        if sys is self.primary:
            await self.emu.node_ctl(self, action)

    async def _power(self, sys, plan):
        """A system without a testbed node to follow: timed transitions (power_delay)."""
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

    async def _power_linked(self, sys, plan):
        """A system that is a testbed node: the node does it, and PowerState says what the node
        did. Boots (and what they apply) come from the node's boot_id (sync_node). The caller
        counted this action in node_busy and set the transition's PowerState."""
        try:
            d = float(self.p["power_delay"])
            if plan in ("off", "restart"):
                await asyncio.sleep(d)   # a graceful stop takes a while
            if plan in ("off", "forceoff"):
                await self.emu.node_ctl(self, "poweroff", lambda: _read(self.node_status) == "off")
            elif plan == "restart":
                before = _read(self.node_boot_file)
                await self.emu.node_ctl(self, "reboot", lambda: _read(self.node_boot_file) not in ("", before))
            else:
                await self.emu.node_ctl(self, "poweron", lambda: _read(self.node_status) not in ("", "off"))
        finally:
            self.node_busy -= 1
            self.sync_node()

    def sync_node(self):
        """Reads the linked node's state: a boot_id not seen before is a boot (pending BIOS and
        staged firmware applied); with no node action on its way, PowerState is the node's."""
        sys = self.primary
        if not self._linked(sys):
            return
        boot_id = _read(self.node_boot_file)
        if boot_id and boot_id != self.node_boot_id:
            self.node_boot_id = boot_id
            self.boot(sys)
        if self.node_busy:
            return
        node = _read(self.node_status)
        want = "Off" if node == "off" else "On" if node else sys.power
        if want != sys.power:
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

    def node_link_state(self):
        """The control API's view of the link."""
        return {"node_boot_id": self.node_boot_id or None, "node_busy": self.node_busy,
                "node_hold": sorted(self.node_hold), "node_waiting": list(self.node_waiting)}
