#include "modules/module.h"

namespace plumb::modules {

const char* DisruptionName(Disruption d) {
  switch (d) {
    case Disruption::kNone: return "none";
    case Disruption::kServiceRestart: return "service-restart";
    case Disruption::kDrain: return "drain";
    case Disruption::kReboot: return "reboot";
    case Disruption::kFirmwareFlash: return "firmware-flash";
  }
  return "none";
}

nlohmann::json Action::ToJson() const {
  return {{"module", module}, {"id", id},         {"key", key},
          {"pointer", pointer}, {"summary", summary}, {"before", before},
          {"after", after},   {"disruption", DisruptionName(disruption)}, {"params", params}};
}

Result<Action> Action::FromJson(const nlohmann::json& j) {
  static const char* kNames[] = {"none", "service-restart", "drain", "reboot", "firmware-flash"};
  try {
    Action a;
    a.module = j.at("module").get<std::string>();
    a.id = j.at("id").get<std::string>();
    a.key = j.at("key").get<std::string>();
    a.pointer = j.value("pointer", "");
    a.summary = j.value("summary", "");
    a.before = j.value("before", nlohmann::json());
    a.after = j.value("after", nlohmann::json());
    a.params = j.value("params", nlohmann::json::object());
    std::string d = j.at("disruption").get<std::string>();
    bool found = false;
    for (int i = 0; i < 5; ++i) {
      if (d == kNames[i]) { a.disruption = static_cast<Disruption>(i); found = true; }
    }
    if (!found) return Diagnostic::Error("plan.action", "unknown disruption '" + d + "'");
    return a;
  } catch (const nlohmann::json::exception& e) {
    return Diagnostic::Error("plan.action", std::string("malformed action: ") + e.what());
  }
}

Result<Facts> Module::ParseProbe(std::string_view, int) const {
  return Diagnostic::Error("probe.unsupported", std::string(Name()) + " has no in-band probe");
}

Result<Facts> Module::ProbeBmc(transport::Bmc&) const {
  return Diagnostic::Error("probe.unsupported", std::string(Name()) + " has no BMC probe");
}

Status Module::Apply(NodeContext&, const Action& action) const {
  return Diagnostic::Error("apply.unsupported",
                           std::string(Name()) + " cannot apply '" + action.id + "' yet");
}

}  // namespace plumb::modules
