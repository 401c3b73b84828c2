"""BIOS attribute validation against an AttributeRegistry (redfish-notes §4)."""

from . import messages as msg


class Registry:
    def __init__(self, registry_json):
        self.attrs = {}
        if registry_json:
            for a in registry_json.get("RegistryEntries", {}).get("Attributes", []):
                self.attrs[a["AttributeName"]] = a

    def defaults(self):
        return {n: a["DefaultValue"] for n, a in self.attrs.items() if "DefaultValue" in a}

    def validate(self, changes):
        """Returns a list of Message objects, empty when every change is acceptable."""
        errors = []
        for name, value in changes.items():
            prop = "/Attributes/" + name
            a = self.attrs.get(name)
            if a is None:
                if self.attrs:
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
