"""BIOS attribute values and their validation (redfish-notes §4).

Most BIOSes list plain values (`"ProcTurboMode": "Enabled"`) and describe them in an
AttributeRegistry. HPE Cray EX lists each value as an object that carries its own description
(`{"AllowableValues": [...], "DataType": "string", "current_value": "Enabled", ...}`) and ships
no registry; a BIOS with neither is checked against the names and JSON types it lists."""

from . import messages as msg

CURRENT_KEYS = ("current_value", "CurrentValue")


def current_of(value):
    """The current value of a listed attribute (the object form's current_value)."""
    if isinstance(value, dict):
        for k in CURRENT_KEYS:
            if k in value:
                return value[k]
        return None
    return value


def render(shape, value):
    """The attribute as the BIOS lists it, with `value` as its current value: a plain value, or
    a copy of the listed object with its current_value replaced (the shared mockup object is
    never changed)."""
    if not isinstance(shape, dict):
        return value
    out = dict(shape)
    out[next((k for k in CURRENT_KEYS if k in shape), "current_value")] = value
    return out


def _entry_from_listing(name, value):
    """An AttributeRegistry-style entry describing a listed attribute."""
    if isinstance(value, dict):
        kind = str(value.get("DataType", "")).lower()
        e = {"AttributeName": name}
        if isinstance(value.get("AllowableValues"), list):
            e["Type"] = "Enumeration"
            e["Value"] = [{"ValueName": str(v)} for v in value["AllowableValues"]]
        elif kind in ("number", "integer"):
            e["Type"] = "Integer"
            e["NumericText"] = isinstance(current_of(value), str)   # Cray lists "0" for a number
            if isinstance(value.get("MinimumValue"), int):
                e["LowerBound"] = value["MinimumValue"]
            if isinstance(value.get("MaximumValue"), int):
                e["UpperBound"] = value["MaximumValue"]
        elif kind in ("boolean", "bool"):
            e["Type"] = "Boolean"
        else:
            e["Type"] = "String"
        return e
    if isinstance(value, bool):
        return {"AttributeName": name, "Type": "Boolean"}
    if isinstance(value, int):
        return {"AttributeName": name, "Type": "Integer"}
    return {"AttributeName": name, "Type": "String"}


class Registry:
    def __init__(self, registry_json):
        self.attrs = {}
        self.strict = False   # unknown names refused even when nothing is listed
        if registry_json:
            for a in registry_json.get("RegistryEntries", {}).get("Attributes", []):
                self.attrs[a["AttributeName"]] = a

    @classmethod
    def from_listing(cls, attributes):
        """A registry made from what the Bios resource itself lists."""
        reg = cls(None)
        reg.strict = True
        for name, value in (attributes or {}).items():
            reg.attrs[name] = _entry_from_listing(name, value)
        return reg

    def defaults(self):
        return {n: a["DefaultValue"] for n, a in self.attrs.items() if "DefaultValue" in a}

    def validate(self, changes):
        """Returns a list of Message objects, empty when every change is acceptable."""
        errors = []
        for name, value in changes.items():
            prop = "/Attributes/" + name
            a = self.attrs.get(name)
            if a is None:
                if self.attrs or self.strict:
                    errors.append(msg.message("PropertyUnknown", name, related=[prop]))
                continue
            if a.get("ReadOnly"):
                errors.append(msg.message("PropertyNotWritable", name, related=[prop]))
                continue
            t = a.get("Type")
            # A Password attribute value is a secret: never echo it back.
            shown = "(hidden)" if t == "Password" else _shown(value)
            if t in ("Enumeration", "String", "Password"):
                if not isinstance(value, str):
                    errors.append(msg.message("PropertyValueTypeError", shown, name, related=[prop]))
                    continue
            if t == "Enumeration":
                allowed = [v.get("ValueName") for v in a.get("Value", [])]
                if value not in allowed:
                    errors.append(msg.message("PropertyValueNotInList", shown, name, related=[prop]))
            elif t in ("String", "Password"):
                if "MaxLength" in a and len(value) > a["MaxLength"] or \
                        "MinLength" in a and len(value) < a["MinLength"]:
                    errors.append(msg.message("PropertyValueFormatError", shown, name, related=[prop]))
            elif t == "Integer":
                if a.get("NumericText") and isinstance(value, str) and value.lstrip("-").isdigit():
                    value = int(value)
                if isinstance(value, bool) or not isinstance(value, int):
                    errors.append(msg.message("PropertyValueTypeError", shown, name, related=[prop]))
                elif "LowerBound" in a and value < a["LowerBound"] or \
                        "UpperBound" in a and value > a["UpperBound"]:
                    errors.append(msg.message("PropertyValueOutOfRange", shown, name, related=[prop]))
            elif t == "Boolean":
                if not isinstance(value, bool):
                    errors.append(msg.message("PropertyValueTypeError", shown, name, related=[prop]))
        return errors


def _shown(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return value
