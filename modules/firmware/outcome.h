#pragma once
/// What a firmware update did, from the task's own words and the inventory (pure).
///
/// The rules, in order:
///   1. A task that failed - TaskState other than Completed, TaskStatus Critical, or a failure
///      message (Update.*.ApplyFailed, VerificationFailed, TransferFailed, ActivateFailed...) -
///      failed, whatever else it says.
///   2. A task whose end plumb could not read (a body cut short, a task deleted before its end
///      was seen, a monitor answering 5xx past the budget) is unknown, never success: the
///      inventory decides. The wanted version there: updated. Anything else: failed, saying why.
///   3. A task that completed with Update.*.UpdateSuccessful updated the device, even when the
///      inventory still shows the old version for a while (BMCs refresh it lazily); one that says
///      AwaitToActivate / AwaitToUpdate / *ResetRequired staged it for the next reset.
///   4. Otherwise (no task, a bare 200, a Completed task that says neither) the inventory
///      decides, read again for a while first (a BMC without a TaskService that applies at once
///      shows the new version a little after it answered): the wanted version is updated, an
///      unchanged one staged.
#include <string>
#include <vector>

namespace plumb::modules::firmware {

enum class TaskVerdict { kUnknown, kApplied, kStaged, kFailed };

/// From MessageIds ("Update.1.0.UpdateSuccessful"); the registry version is ignored. A failure
/// message wins over a staging one, which wins over UpdateSuccessful.
TaskVerdict VerdictOf(const std::vector<std::string>& message_ids);

/// What the BMC said of the update, as Decide needs it (from transport::TaskOutcome).
struct TaskReport {
  bool had_task = false;
  std::string unknown;       ///< why its end could not be read; "" when it was
  std::string state;         ///< TaskState
  std::string task_status;   ///< TaskStatus
  std::string end;           ///< the end in words, with the HTTP status (TaskOutcome::EndText)
  std::vector<std::string> message_ids;
};

/// What an update did.
struct FirmwareOutcome {
  /// The update failed, or its end is unknown and the inventory does not show it: `why`.
  bool failed = false;
  std::string why;
  /// The update waits for a reset (verify after the reboot).
  bool staged = false;
  /// The task's end could not be read, and the inventory shows the wanted version: why not.
  std::string unread;
  /// Applied by the task's account, but the inventory did not show it yet.
  bool inventory_lags = false;
  std::string version_now;             ///< what the inventory shows now
  std::string version_wanted;
  std::string method;                  ///< "SimpleUpdate" or "multipart"
  std::string task_says;               ///< the deciding message key ("UpdateSuccessful"), "" if none
  std::vector<std::string> messages;   ///< task / BMC messages
  std::string Describe() const;
};

/// The deciding message key among `ids` ("ApplyFailed", "AwaitToActivate"...), "" if none.
std::string DecidingKey(const std::vector<std::string>& message_ids);

/// Does an inventory Version `now` show the wanted version? The one comparison every outcome
/// rule uses.
bool ShowsVersion(const std::string& now, const std::string& wanted);

/// Decides failed/staged/applied from what the task said and what the targets' inventory shows
/// now (rules 1-4 above; rule 4's re-reading is the caller's: `versions_now` is the last read).
FirmwareOutcome Decide(const TaskReport& task, const std::string& wanted,
                       const std::vector<std::string>& versions_now);

/// True when the inventory has the last word: the task's end is unknown, or it neither failed
/// nor said applied/staged. The caller then re-reads the versions for a while before Decide.
bool InventoryDecides(const TaskReport& task);

}  // namespace plumb::modules::firmware
