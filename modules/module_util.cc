#include "modules/module_util.h"

#include <fmt/format.h>

#include "modules/parse_util.h"
#include "schemas/json_pointer.h"

namespace plumb::modules {

Result<std::vector<ProbePart>> PartsOf(std::string_view module, std::string_view out) {
  auto parts = ParseFramedParts(out);
  if (!parts.ok()) {
    Diagnostic d = parts.error();
    d.code = fmt::format("probe.{}", module);
    return d;
  }
  return parts;
}

std::string PackageManagerOf(const std::vector<ProbePart>& parts) {
  const ProbePart* pm = FindPart(parts, "pm");
  if (!pm) return "none";
  std::string_view v = Trim(pm->text);
  if (v == "dpkg" || v == "rpm") return std::string(v);
  return "none";
}

Action MakeAction(std::string_view module, std::string id, std::string key, std::string pointer,
                  std::string summary, nlohmann::json before, nlohmann::json after,
                  Disruption disruption, nlohmann::json params) {
  Action a;
  a.module = std::string(module);
  a.id = std::move(id);
  a.key = std::move(key);
  a.pointer = std::move(pointer);
  a.summary = std::move(summary);
  a.before = std::move(before);
  a.after = std::move(after);
  a.disruption = disruption;
  a.params = params.is_object() ? std::move(params) : nlohmann::json::object();
  return a;
}

std::string ScalarString(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) return v.dump();
  if (v.is_null()) return "";
  return v.dump();
}

const nlohmann::json* Lookup(const nlohmann::json& j, std::initializer_list<std::string_view> path) {
  const nlohmann::json* cur = &j;
  for (std::string_view step : path) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(std::string(step));
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

std::string StringField(const nlohmann::json& facts, std::string_view key) {
  return schemas::StringMember(facts, key);
}

}  // namespace plumb::modules
