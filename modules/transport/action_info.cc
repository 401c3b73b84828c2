#include "modules/transport/action_info.h"

#include <algorithm>

#include "modules/transport/bmc.h"

namespace plumb::transport {
namespace {

constexpr std::string_view kAllowable = "@Redfish.AllowableValues";

std::vector<std::string> Strings(const nlohmann::json& list) {
  std::vector<std::string> out;
  if (!list.is_array()) return out;
  for (const auto& v : list) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

bool ActionParameter::Allows(const std::string& value) const {
  return !has_allowable || std::find(allowable.begin(), allowable.end(), value) != allowable.end();
}

const ActionParameter* ActionSpec::Find(const std::string& name) const {
  for (const auto& p : params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

ActionSpec ParseActionSpec(const nlohmann::json& action, const nlohmann::json& info) {
  ActionSpec spec;
  if (!action.is_object()) return spec;
  spec.target = action.value("target", "");
  spec.action_info = action.value("@Redfish.ActionInfo", "");
  if (info.is_object() && info.contains("Parameters") && info["Parameters"].is_array()) {
    spec.declared = true;
    for (const auto& p : info["Parameters"]) {
      if (!p.is_object() || !p.contains("Name") || !p["Name"].is_string()) continue;
      ActionParameter ap;
      ap.name = p["Name"].get<std::string>();
      ap.required = p.value("Required", false);
      if (p.contains("AllowableValues") && p["AllowableValues"].is_array()) {
        ap.has_allowable = true;
        ap.allowable = Strings(p["AllowableValues"]);
      }
      spec.params.push_back(std::move(ap));
    }
  }
  // Inline annotations: `TransferProtocol@Redfish.AllowableValues` (an ActionInfo's own list,
  // when it has one, is kept: it is the more specific of the two).
  for (auto it = action.begin(); it != action.end(); ++it) {
    const std::string& k = it.key();
    if (k.size() <= kAllowable.size() ||
        k.compare(k.size() - kAllowable.size(), kAllowable.size(), kAllowable) != 0) {
      continue;
    }
    std::string name = k.substr(0, k.size() - kAllowable.size());
    auto found = std::find_if(spec.params.begin(), spec.params.end(),
                              [&](const ActionParameter& p) { return p.name == name; });
    if (found == spec.params.end()) {
      spec.params.push_back({name, false, false, {}});
      found = spec.params.end() - 1;
    }
    if (!found->has_allowable) {
      found->has_allowable = true;
      found->allowable = Strings(it.value());
    }
  }
  return spec;
}

Result<ActionSpec> ReadActionSpec(Bmc& bmc, const nlohmann::json& action) {
  nlohmann::json info;
  if (action.is_object() && action.contains("@Redfish.ActionInfo") &&
      action["@Redfish.ActionInfo"].is_string()) {
    auto r = bmc.Get(action["@Redfish.ActionInfo"].get<std::string>());
    if (!r.ok()) return r.error();
    info = r.value();
  }
  return ParseActionSpec(action, info);
}

}  // namespace plumb::transport
