#include "modules/health_util.h"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "modules/module_util.h"

namespace plumb::modules {

Result<Facts> HealthModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return Facts(facts_from_parts_(*parts));
}

std::vector<Action> HealthModule::Diff(const nlohmann::json&, const Facts&) const { return {}; }

ApplyOutcome HealthModule::Apply(NodeContext&, const Action& action) const { return RefuseCheck(action); }

CheckResult CheckMaker::operator()(std::string id, std::string name, std::string subject, CheckStatus status,
                                   nlohmann::json measured, nlohmann::json threshold, std::string message) const {
  return {.module = std::string(module),
          .id = std::move(id),
          .name = std::move(name),
          .subject = std::move(subject),
          .status = status,
          .measured = std::move(measured),
          .threshold = std::move(threshold),
          .message = std::move(message)};
}

Result<std::vector<CheckResult>> CheckFacts(const Module& m, const nlohmann::json& desired,
                                            const Facts& facts) {
  try {
    return m.Checks(desired, facts);
  } catch (const nlohmann::json::exception& e) {
    return Diagnostic::Error(
        "facts.malformed", fmt::format("the {} facts do not read: {}", m.Name(), e.what()), {}, {},
        "gather the node again (plumb gather --facts-out), rather than editing a snapshot");
  }
}

ApplyOutcome RefuseCheck(const Action& action) {
  return ApplyOutcome::Failed(Diagnostic::Error(
      "apply.health", action.summary, {}, action.key,
      "a failed health check is not something plumb can apply: repair the node, then re-run "
      "plumb (the next read finds the check passing)"));
}

const nlohmann::json& HealthSettings(const nlohmann::json& desired, std::string_view module) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json* s = Lookup(desired, {"health", module});
  return s && s->is_object() ? *s : kEmpty;
}

std::optional<long long> IntSetting(const nlohmann::json& settings, std::string_view key, long long min,
                                    long long max) {
  const nlohmann::json* v = Lookup(settings, {key});
  if (!v || !(v->is_number_integer() || v->is_number_unsigned())) return std::nullopt;
  if (v->is_number_unsigned() && v->get<unsigned long long>() > static_cast<unsigned long long>(max))
    return std::nullopt;
  long long n = v->get<long long>();
  if (n < min || n > max) return std::nullopt;
  return n;
}

std::optional<double> NumberSetting(const nlohmann::json& settings, std::string_view key) {
  const nlohmann::json* v = Lookup(settings, {key});
  if (!v || !v->is_number()) return std::nullopt;
  double d = v->get<double>();
  if (!std::isfinite(d) || d < 0) return std::nullopt;
  return d;
}

bool BoolSetting(const nlohmann::json& settings, std::string_view key, bool fallback) {
  const nlohmann::json* v = Lookup(settings, {key});
  return v && v->is_boolean() ? v->get<bool>() : fallback;
}

long long IntField(const nlohmann::json& j, std::string_view key, long long fallback) {
  const nlohmann::json* v = Lookup(j, {key});
  return v && v->is_number_integer() ? v->get<long long>() : fallback;
}

std::vector<CheckResult> PartErrorChecks(
    std::string_view module, const nlohmann::json& facts,
    const std::function<std::pair<std::string, std::string>(const std::string& part)>& label) {
  std::vector<CheckResult> out;
  const nlohmann::json* errors = Lookup(facts, {kPartErrorsKey});
  if (!errors || !errors->is_array()) return out;
  for (const auto& e : *errors) {
    std::string part = StringField(e, "part");
    std::string message = StringField(e, "message");
    if (part.empty()) part = "probe";
    auto [name, subject] = label(part);
    out.push_back({.module = std::string(module),
                   .id = fmt::format("{}.{}.unread", module, part),
                   .name = std::move(name),
                   .subject = std::move(subject),
                   .status = CheckStatus::kFail,
                   .measured = nullptr,
                   .threshold = "read",
                   .message = message.empty() ? fmt::format("'{}' could not be read", part)
                                              : fmt::format("not read: {}", message)});
  }
  return out;
}

bool PartFailed(const nlohmann::json& facts, std::string_view part) {
  const nlohmann::json* errors = Lookup(facts, {kPartErrorsKey});
  if (!errors || !errors->is_array()) return false;
  for (const auto& e : *errors)
    if (StringField(e, "part") == part) return true;
  return false;
}

std::string CheckIdSegment(std::string_view name) {
  std::string out;
  bool gap = false;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (gap && !out.empty()) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      gap = false;
    } else {
      gap = true;
    }
  }
  return out.empty() ? "unnamed" : out;
}

std::string FormatNumber(double v) {
  std::string s = fmt::format("{:.2f}", v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace plumb::modules
