#include "modules/module.h"

#include "modules/check_result.h"

#include <fmt/format.h>

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

std::vector<Diagnostic> ModuleProblems(const Result<Facts>& observed) {
  if (!observed.ok()) return {observed.error()};
  std::vector<Diagnostic> out;
  const Facts& facts = observed.value();
  if (!facts.is_object()) return out;
  auto list = facts.find(kPartErrorsKey);
  if (list == facts.end() || !list->is_array()) return out;
  for (const auto& e : *list) {
    auto field = [&](const char* key) {
      auto it = e.is_object() ? e.find(key) : e.end();
      return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    std::string code = field("code"), message = field("message"), part = field("part");
    if (message.empty())
      message = part.empty() ? "a part could not be read" : "part '" + part + "' could not be read";
    out.push_back(Diagnostic::Error(code.empty() ? "probe.part" : code, message));
  }
  return out;
}

std::string ModuleProblemText(const Result<Facts>& observed) {
  std::string out;
  for (const Diagnostic& d : ModuleProblems(observed))
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", d.code, d.message);
  return out;
}

Result<Facts> Module::ParseProbe(std::string_view, int) const {
  return Diagnostic::Error("probe.unsupported", std::string(Name()) + " has no in-band probe");
}

Result<Facts> Module::ProbeBmc(transport::Bmc&) const {
  return Diagnostic::Error("probe.unsupported", std::string(Name()) + " has no BMC probe");
}

ApplyOutcome Module::Apply(NodeContext&, const Action& action) const {
  return ApplyOutcome::Failed(Diagnostic::Error(
      "apply.unsupported", std::string(Name()) + " cannot apply '" + action.id + "' yet"));
}

bool ModuleInfo::Owns(std::string_view p) const {
  for (std::string_view prefix : owns)
    if (p.size() >= prefix.size() && p.substr(0, prefix.size()) == prefix &&
        (p.size() == prefix.size() || p[prefix.size()] == '/'))
      return true;
  return false;
}

namespace {

/// Does `pointer` fall under `prefix`, where a prefix segment "*" stands for any one segment?
/// Returns the number of prefix segments matched (its specificity), or -1.
int PrefixMatch(std::string_view prefix, std::string_view pointer) {
  int segments = 0;
  while (!prefix.empty()) {
    // Both start with '/': compare one segment.
    if (pointer.empty() || pointer[0] != '/' || prefix[0] != '/') return -1;
    size_t pe = prefix.find('/', 1), qe = pointer.find('/', 1);
    std::string_view ps = prefix.substr(1, pe == std::string_view::npos ? pe : pe - 1);
    std::string_view qs = pointer.substr(1, qe == std::string_view::npos ? qe : qe - 1);
    if (ps != "*" && ps != qs) return -1;
    ++segments;
    prefix = pe == std::string_view::npos ? std::string_view() : prefix.substr(pe);
    pointer = qe == std::string_view::npos ? std::string_view() : pointer.substr(qe);
  }
  return segments;
}

}  // namespace

Disruption ModuleInfo::DisruptionOf(std::string_view p) const {
  Disruption d = disruption;
  int best = -1;
  for (const KeyDisruption& k : disruption_by_key)
    if (int n = PrefixMatch(k.prefix, p); n > best) {
      best = n;
      d = k.disruption;
    }
  return d;
}

std::string ModuleInfo::DisruptionText() const {
  if (owns.empty()) return "-";   // it only reads
  std::string out = DisruptionName(disruption);
  for (const KeyDisruption& k : disruption_by_key)
    out += fmt::format("; {}: {}", k.prefix.substr(k.prefix.rfind('/') + 1),
                       DisruptionName(k.disruption));
  return out;
}

bool Module::Wants(const nlohmann::json& desired) const {
  for (std::string_view p : Info().owns) {
    try {
      const nlohmann::json::json_pointer ptr{std::string(p)};
      if (!desired.contains(ptr)) continue;
      const nlohmann::json& v = desired.at(ptr);
      if (v.is_null() || (v.is_object() && v.empty())) continue;
      return true;
    } catch (const nlohmann::json::exception&) {
      // A pointer through a non-object: nothing there.
    }
  }
  return false;
}

Result<std::vector<Action>> Module::DiffFacts(const nlohmann::json& desired,
                                              const Facts& facts) const {
  try {
    return Diff(desired, facts);
  } catch (const nlohmann::json::exception& e) {
    // nlohmann's words name the type it wanted ("type must be boolean, but is string").
    return Diagnostic::Error(
        "facts.malformed", fmt::format("the {} facts do not read: {}", Name(), e.what()), {}, {},
        "gather the node again (plumb gather --facts-out), rather than editing a snapshot");
  }
}

ApplyOutcome ApplyOutcome::Done(std::string message) {
  return {Kind::kDone, std::move(message), {}};
}
ApplyOutcome ApplyOutcome::Staged(std::string message) {
  return {Kind::kStaged, std::move(message), {}};
}
ApplyOutcome ApplyOutcome::NothingToDo(std::string message) {
  return {Kind::kNothingToDo, std::move(message), {}};
}
ApplyOutcome ApplyOutcome::Failed(Diagnostic error) {
  std::string m = error.message;
  return {Kind::kFailed, std::move(m), std::move(error)};
}
ApplyOutcome ApplyOutcome::From(const Status& s, std::string done_message) {
  return s ? Done(std::move(done_message)) : Failed(s.error());
}
Status ApplyOutcome::ToStatus() const {
  if (ok()) return OkStatus();
  return failure;
}

const char* ApplyOutcomeName(ApplyOutcome::Kind k) {
  switch (k) {
    case ApplyOutcome::Kind::kDone: return "done";
    case ApplyOutcome::Kind::kStaged: return "staged";
    case ApplyOutcome::Kind::kNothingToDo: return "nothing-to-do";
    case ApplyOutcome::Kind::kFailed: return "failed";
  }
  return "failed";
}

std::vector<CheckResult> Module::Checks(const nlohmann::json&, const Facts&) const { return {}; }

const char* CheckStatusName(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return "pass";
    case CheckStatus::kSkip: return "skip";
    case CheckStatus::kWarn: return "warn";
    case CheckStatus::kFail: return "fail";
  }
  return "fail";
}

nlohmann::json CheckResult::ToJson() const {
  return {{"module", module},   {"id", id},
          {"name", name},       {"subject", subject},
          {"status", CheckStatusName(status)},
          {"measured", measured}, {"threshold", threshold},
          {"message", message}};
}

}  // namespace plumb::modules
