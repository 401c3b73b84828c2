#include "modules/bios/attributes.h"
#include "schemas/ascii.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace plumb::modules::bios {
namespace {

using nlohmann::json;

}  // namespace

json CurrentValue(const json& listed) {
  if (!listed.is_object()) return listed;
  for (const char* k : {"current_value", "CurrentValue"}) {
    if (listed.contains(k)) return listed[k];
  }
  return nullptr;
}

json CurrentValues(const json& attributes) {
  json out = json::object();
  if (!attributes.is_object()) return out;
  for (auto it = attributes.begin(); it != attributes.end(); ++it) {
    out[it.key()] = CurrentValue(it.value());
  }
  return out;
}

json ListedEntries(const json& attributes) {
  json out = json::array();
  if (!attributes.is_object()) return out;
  for (auto it = attributes.begin(); it != attributes.end(); ++it) {
    const json& v = it.value();
    json e = {{"AttributeName", it.key()}};
    if (!v.is_object()) {
      out.push_back(std::move(e));
      continue;
    }
    std::string kind = v.contains("DataType") && v["DataType"].is_string()
                           ? schemas::AsciiLower(v["DataType"].get<std::string>()) : "";
    if (v.contains("AllowableValues") && v["AllowableValues"].is_array()) {
      e["Type"] = "Enumeration";
      e["Value"] = json::array();
      for (const auto& a : v["AllowableValues"]) {
        e["Value"].push_back({{"ValueName", a.is_string() ? a.get<std::string>() : a.dump()}});
      }
    } else if (kind == "number" || kind == "integer") {
      e["Type"] = "Integer";
      if (v.contains("MinimumValue") && v["MinimumValue"].is_number_integer()) e["LowerBound"] = v["MinimumValue"];
      if (v.contains("MaximumValue") && v["MaximumValue"].is_number_integer()) e["UpperBound"] = v["MaximumValue"];
    } else if (kind == "boolean") {
      e["Type"] = "Boolean";
    } else {
      e["Type"] = "String";
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace plumb::modules::bios
