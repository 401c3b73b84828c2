#pragma once
/// Desired-state keys in user terms. The desired state is JSON; a key is a leaf's JSON pointer
/// written with dots ("/sysctl/net.core.rmem_max" -> "sysctl.net.core.rmem_max"), which is
/// how the cluster repo's YAML reads and how waivers name keys. Pointers and keys convert in
/// schemas/json_pointer.h (PointerToKey, PointerUnder), the one place pointers are escaped.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/module.h"
#include "modules/registry.h"
#include "schemas/json_pointer.h"

namespace plumb::plans {

/// The JSON pointers of every leaf (scalar, list, or empty object) of `doc`, in key order.
std::vector<std::string> LeafPointers(const nlohmann::json& doc);

/// The most a change of this desired key can disturb a node: what the module that owns it
/// declares (ModuleInfo::DisruptionOf; the table in `plumb modules`). For `plumb diff`, which
/// sees no node: the plan, which reads the nodes, may find less (a driver installed but not
/// loaded needs only the reboot it would need anyway...).
/// `registry`: the modules that may own it (a test gives its fakes).
modules::Disruption KeyDisruption(std::string_view pointer,
                                  const modules::Registry& registry = modules::DefaultRegistry());

/// Shell-free glob: `*` any run, `?` one character, `[...]` a class (`[!...]` negated, ranges).
bool GlobMatch(std::string_view pattern, std::string_view text);

}  // namespace plumb::plans
