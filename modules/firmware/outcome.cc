#include "modules/firmware/outcome.h"

#include <algorithm>

#include "modules/firmware/version_match.h"

namespace plumb::modules::firmware {
namespace {

std::string Key(const std::string& id) {
  auto dot = id.rfind('.');
  return dot == std::string::npos ? id : id.substr(dot + 1);
}

bool Staging(const std::string& key) {
  return key == "AwaitToActivate" || key == "AwaitToUpdate" || key == "ResetRequired" ||
         key == "SystemResetRequired" || key == "RestartRequired";
}

}  // namespace

TaskVerdict VerdictOf(const std::vector<std::string>& ids) {
  bool applied = false;
  for (const auto& id : ids) {
    std::string k = Key(id);
    if (Staging(k)) return TaskVerdict::kStaged;   // a reset is still needed: staged wins
    if (k == "UpdateSuccessful") applied = true;
  }
  return applied ? TaskVerdict::kApplied : TaskVerdict::kUnknown;
}

FirmwareOutcome Decide(TaskVerdict verdict, const std::string& task_says, const std::string& wanted,
                       const std::vector<std::string>& versions_now) {
  FirmwareOutcome out;
  out.version_wanted = wanted;
  out.version_now = wanted;
  out.task_says = task_says;
  for (const auto& v : versions_now) {
    if (!VersionMatches(wanted, v)) out.version_now = v;   // "2.80 Jun 01 2024" shows "2.80"
  }
  bool shows_wanted = VersionMatches(wanted, out.version_now);
  switch (verdict) {
    case TaskVerdict::kApplied: out.inventory_lags = !shows_wanted; break;
    case TaskVerdict::kStaged: out.staged = !shows_wanted; break;
    case TaskVerdict::kUnknown: out.staged = !shows_wanted; break;
  }
  return out;
}

std::string FirmwareOutcome::Describe() const {
  std::string said = task_says.empty() ? "" : "the task says " + task_says + "; ";
  if (staged) {
    return "staged via " + method + ", applies on reset (" + said + "inventory still shows " +
           version_now + ")";
  }
  if (inventory_lags) {
    return "updated via " + method + " to " + version_wanted + " (" + said +
           "the inventory still shows " + version_now + ": the next plan verifies it)";
  }
  return "updated via " + method + " to " + version_now;
}

}  // namespace plumb::modules::firmware
