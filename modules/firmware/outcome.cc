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

// The Update registry's failures (DSP8010 Update 1.x), and any other "...Failed" a vendor adds.
bool Failure(const std::string& key) {
  return key == "NoTargetsDetermined" || key == "UpdateNotAllowed" ||
         (key.size() > 6 && key.compare(key.size() - 6, 6, "Failed") == 0);
}

TaskVerdict VerdictOfKey(const std::string& k) {
  if (Failure(k)) return TaskVerdict::kFailed;
  if (Staging(k)) return TaskVerdict::kStaged;
  if (k == "UpdateSuccessful") return TaskVerdict::kApplied;
  return TaskVerdict::kUnknown;
}

int Rank(TaskVerdict v) {
  switch (v) {
    case TaskVerdict::kFailed: return 3;
    case TaskVerdict::kStaged: return 2;   // a reset is still needed: staged beats applied
    case TaskVerdict::kApplied: return 1;
    case TaskVerdict::kUnknown: break;
  }
  return 0;
}

bool TaskFailed(const TaskReport& t) {
  if (!t.unknown.empty()) return false;
  return (t.had_task && t.state != "Completed") || t.task_status == "Critical" ||
         VerdictOf(t.message_ids) == TaskVerdict::kFailed;
}

}  // namespace

// The pin matching rule of modules/firmware/version_match.h ("2.80 Jun 01 2024" shows "2.80").
bool ShowsVersion(const std::string& now, const std::string& wanted) {
  return VersionMatches(wanted, now);
}

TaskVerdict VerdictOf(const std::vector<std::string>& ids) {
  TaskVerdict best = TaskVerdict::kUnknown;
  for (const auto& id : ids) {
    TaskVerdict v = VerdictOfKey(Key(id));
    if (Rank(v) > Rank(best)) best = v;
  }
  return best;
}

std::string DecidingKey(const std::vector<std::string>& ids) {
  const TaskVerdict v = VerdictOf(ids);
  if (v == TaskVerdict::kUnknown) return "";
  for (const auto& id : ids)
    if (VerdictOfKey(Key(id)) == v) return Key(id);
  return "";
}

bool InventoryDecides(const TaskReport& t) {
  if (!t.unknown.empty()) return true;
  return !TaskFailed(t) && VerdictOf(t.message_ids) == TaskVerdict::kUnknown;
}

FirmwareOutcome Decide(const TaskReport& task, const std::string& wanted,
                       const std::vector<std::string>& versions_now) {
  FirmwareOutcome out;
  out.version_wanted = wanted;
  out.version_now = wanted;
  out.task_says = DecidingKey(task.message_ids);
  // Every target: the one that does not show the wanted version is "now".
  auto shows = [&](const std::string& v) { return ShowsVersion(v, wanted); };
  for (const auto& v : versions_now) {
    if (!shows(v)) out.version_now = v;
  }
  const bool shows_wanted = versions_now.empty() || shows(out.version_now);
  if (TaskFailed(task)) {
    out.failed = true;
    out.why = task.end + (out.task_says.empty() ? "" : " (" + out.task_says + ")") +
              "; the inventory shows " + out.version_now;
    return out;
  }
  if (!task.unknown.empty()) {
    // Never success on a word nobody could read: the version is the truth.
    if (!shows_wanted) {
      out.failed = true;
      out.why = task.end + "; the inventory still shows " + out.version_now + ", not " + wanted;
    } else {
      out.unread = task.end;
    }
    return out;
  }
  switch (VerdictOf(task.message_ids)) {
    case TaskVerdict::kApplied: out.inventory_lags = !shows_wanted; break;
    case TaskVerdict::kStaged:
    case TaskVerdict::kUnknown: out.staged = !shows_wanted; break;
    case TaskVerdict::kFailed: break;   // TaskFailed above
  }
  return out;
}

std::string FirmwareOutcome::Describe() const {
  std::string said = task_says.empty() ? "" : "the task says " + task_says + "; ";
  if (failed) return "update via " + method + " failed: " + why;
  if (staged) {
    return "staged via " + method + ", applies on reset (" + said + "inventory still shows " +
           version_now + ")";
  }
  if (inventory_lags) {
    return "updated via " + method + " to " + version_wanted + " (" + said +
           "the inventory still shows " + version_now + ": the next plan verifies it)";
  }
  if (!unread.empty()) {
    return "updated via " + method + " to " + version_now + " (by the inventory: " + unread + ")";
  }
  return "updated via " + method + " to " + version_now;
}

}  // namespace plumb::modules::firmware
