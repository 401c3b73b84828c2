#pragma once
/// What a firmware update did, from the task's own words first and the inventory second (pure).
///
/// A task that completed with Update.*.UpdateSuccessful updated the device, even when the
/// inventory still shows the old version for a while (BMCs refresh it lazily); one that says
/// AwaitToActivate / AwaitToUpdate / *ResetRequired staged it for the next reset. Only when the
/// task says neither (no task, a bare 200) does the inventory decide: an unchanged version is
/// staged.
#include <string>
#include <vector>

namespace plumb::modules::firmware {

enum class TaskVerdict { kUnknown, kApplied, kStaged };

/// From MessageIds ("Update.1.0.UpdateSuccessful"); the registry version is ignored.
TaskVerdict VerdictOf(const std::vector<std::string>& message_ids);

/// What an update did.
struct FirmwareOutcome {
  /// The update waits for a reset (verify after the reboot).
  bool staged = false;
  /// Applied by the task's account, but the inventory did not show it yet.
  bool inventory_lags = false;
  std::string version_now;             ///< what the inventory shows now
  std::string version_wanted;
  std::string method;                  ///< "SimpleUpdate" or "multipart"
  std::string task_says;               ///< the deciding message key ("UpdateSuccessful"), "" if none
  std::vector<std::string> messages;   ///< task / BMC messages
  std::string Describe() const;
};

/// Decides staged/applied from the verdict and what the targets' inventory shows now.
FirmwareOutcome Decide(TaskVerdict verdict, const std::string& task_says,
                       const std::string& wanted, const std::vector<std::string>& versions_now);

}  // namespace plumb::modules::firmware
