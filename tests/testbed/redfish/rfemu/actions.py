"""Every action a mockup advertises, and the parameters it accepts (redfish-notes §14.4/§14.5).

An action's parameters come from its @Redfish.ActionInfo resource (Name, Required,
AllowableValues) and from inline `<Parameter>@Redfish.AllowableValues` annotations. A request
is checked against both, as a BMC that enforces its ActionInfo does: an unknown parameter, a
missing required one, or a value outside the allowable list is a 400 with the Base message that
says which."""

from . import messages as msg

# Parameters DSP0266/DSP8010 define for actions that advertise no ActionInfo: without one, only
# these are accepted (a typo is still refused).
STANDARD_PARAMETERS = {
    "#UpdateService.SimpleUpdate": {"ImageURI", "TransferProtocol", "Targets", "Username", "Password",
                                    "ForceUpdate", "Stage", "LocalImage", "ExcludeTargets",
                                    "@Redfish.OperationApplyTime"},
    "#ComputerSystem.Reset": {"ResetType"},
    "#Manager.Reset": {"ResetType"},
}


class Parameter:
    __slots__ = ("name", "required", "allowable")

    def __init__(self, name, required=False, allowable=None):
        self.name = name
        self.required = required
        self.allowable = allowable


class ActionSpec:
    """One action: its name ("#ComputerSystem.Reset"), the resource that advertises it, its
    target, and its parameters. `declared` is True when an ActionInfo lists the parameters."""

    def __init__(self, name, owner, target, params, declared):
        self.name = name
        self.owner = owner
        self.target = target
        self.params = params
        self.declared = declared

    def allowable(self, name):
        p = self.params.get(name)
        return p.allowable if p else None

    def validate(self, body, key_of):
        """Base messages for everything wrong with `body` (empty when acceptable). Link-valued
        allowable lists (Targets) compare with the mockup's path normalization `key_of`."""
        action = self.name.lstrip("#")
        errors = []
        known = set(self.params) if self.declared else STANDARD_PARAMETERS.get(self.name)
        for name in body:
            if name.startswith("@"):
                continue   # annotations (@Redfish.OperationApplyTime) are not parameters
            if known is not None and name not in known:
                errors.append(msg.message("ActionParameterUnknown", action, name))
        for p in self.params.values():
            if p.required and p.name not in body:
                errors.append(msg.message("ActionParameterMissing", action, p.name))
            if p.allowable is None or p.name not in body:
                continue
            values = body[p.name] if isinstance(body[p.name], list) else [body[p.name]]
            links = all(isinstance(a, str) and a.startswith("/") for a in p.allowable) and p.allowable
            allowed = {key_of(a) for a in p.allowable} if links else set(map(str, p.allowable))
            for v in values:
                shown = key_of(v) if links and isinstance(v, str) else str(v)
                if shown not in allowed:
                    errors.append(msg.message("ActionParameterValueNotInList", v, p.name, action))
        return errors


def _spec(m, name, owner, action):
    params = {}
    declared = False
    info_link = action.get("@Redfish.ActionInfo")
    info = m.get(info_link) if info_link else None
    if isinstance(info, dict) and isinstance(info.get("Parameters"), list):
        declared = True
        for p in info["Parameters"]:
            if isinstance(p, dict) and p.get("Name"):
                params[p["Name"]] = Parameter(p["Name"], bool(p.get("Required")),
                                              p.get("AllowableValues"))
    suffix = "@Redfish.AllowableValues"
    for k, v in action.items():
        if k.endswith(suffix) and isinstance(v, list):
            pname = k[:-len(suffix)]
            p = params.setdefault(pname, Parameter(pname))
            if p.allowable is None:
                p.allowable = v
    return ActionSpec(name, owner, action["target"], params, declared)


def _walk(m, owner, acts, out):
    for name, action in acts.items():
        if name == "Oem" and isinstance(action, dict):
            _walk(m, owner, action, out)
        elif name.startswith("#") and isinstance(action, dict) and isinstance(action.get("target"), str):
            out[m.key(action["target"])] = _spec(m, name, owner, action)


def index(m):
    """{target key: ActionSpec} for every action of every resource in the mockup."""
    out = {}
    for res in m.resources.values():
        if isinstance(res, dict) and isinstance(res.get("Actions"), dict):
            _walk(m, res.get("@odata.id"), res["Actions"], out)
    return out
