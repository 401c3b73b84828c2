#pragma once
/// Bmc: what modules may ask of one node's BMC. Every link is taken verbatim from a payload;
/// nothing here builds a Redfish URI. The real implementation is RedfishClient
/// (redfish_client.h) over an HttpClient; module unit tests run RedfishClient over a fake
/// HttpClient that serves a scripted Redfish service (tests/fakes/fake_redfish.h).
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/transport/cancel_signal.h"
#include "modules/transport/wait_progress.h"
#include "schemas/result.h"

namespace plumb::transport {

using Json = nlohmann::json;

/// A Redfish response: status, parsed body (null if empty or not JSON) and the headers that
/// matter. ExtendedInfo messages of a successful response (iLO's SystemResetRequired, partial
/// success) are kept in `messages`, rendered "MessageId: Message".
struct BmcResponse {
  int status = 0;
  Json body;
  std::string location;   ///< resolved onto the BMC's origin; "" if absent
  std::string etag;       ///< ETag header, or @odata.etag from the body
  std::vector<std::string> messages;
};

/// The end of an asynchronous operation (DSP0266 "Asynchronous operations").
///
/// An end plumb could not read is not a success: `unknown` says why (a body that is not JSON,
/// a task deleted before its end was seen, a monitor that answered 5xx past the budget, a 202
/// with nothing to follow), and the caller decides from what it can check itself (the firmware
/// inventory's version, the power state).
struct TaskOutcome {
  bool had_task = false;      ///< false: the service answered synchronously (200/204, no task)
  std::string state;          ///< TaskState: "Completed", "Exception", "Killed", "Cancelled"...
  std::string task_status;    ///< TaskStatus: OK / Warning / Critical ("" when unknown)
  std::string task_link;      ///< the Task resource, if seen
  std::string monitor;        ///< the task monitor (the 202's Location), if any
  int http_status = 0;        ///< the last answer's HTTP status (the monitor's, or the POST's)
  std::string unknown;        ///< why the end could not be read; "" when it was
  std::vector<std::string> messages;       ///< "MessageId: Message", each once
  std::vector<std::string> message_ids;    ///< the MessageIds among them ("Update.1.0.UpdateSuccessful")
  Json final_body;            ///< the final response of the operation (or the last Task body)
  bool Known() const { return unknown.empty(); }
  /// Read, and it ended well: no task (a synchronous answer), or Completed without a Critical
  /// TaskStatus (a Completed task can still say Critical: iDRAC's failed image apply).
  bool Succeeded() const {
    return Known() && (!had_task || state == "Completed") && task_status != "Critical";
  }
  /// Read, and it ended badly.
  bool Failed() const { return Known() && !Succeeded(); }
  /// "task /redfish/v1/TaskService/Tasks/7 ended Completed, TaskStatus Critical (HTTP 200)", or
  /// "the end of task ... is unknown: <why>".
  std::string EndText() const;
};

/// Per-call hooks of an operation that may run long (a firmware update's task).
struct TaskWatch {
  /// Once the BMC accepted the operation with a task, before any wait: its Task link and
  /// monitor (either may be ""), so the caller can record what is in flight.
  std::function<void(const std::string& task_link, const std::string& monitor)> accepted;
  /// After every look at the task.
  std::function<void(const WaitProgress&)> progress;
};

/// What a reset should achieve; the ResetType sent is chosen from what the BMC advertises.
enum class ResetKind {
  kReboot,       ///< GracefulRestart > ForceRestart > PowerCycle > GracefulShutdown/Off/ForceOff + On
  kHardReboot,   ///< ForceRestart > PowerCycle > ForceOff + On
  kOn,           ///< On > ForceOn > PushPowerButton (only if Off)
  kOff,          ///< GracefulShutdown > Off (HPE Cray EX) > ForceOff > PushPowerButton
  kForceOff,     ///< ForceOff > GracefulShutdown
};
const char* ResetKindName(ResetKind k);   // "reboot", "hard-reboot", "on", "off", "force-off"

class Bmc {
 public:
  virtual ~Bmc() = default;

  /// The BMC's base URL as configured, for messages.
  virtual const std::string& Name() const = 0;

  /// GET /redfish/v1/ (cached for the life of the client).
  virtual Result<Json> ServiceRoot() = 0;
  /// GET a link verbatim. Non-2xx is an error (code "bmc.http.<status>", ExtendedInfo in the
  /// message).
  virtual Result<Json> Get(std::string_view link) = 0;
  /// GET several links concurrently (bounded by the per-BMC connection limit); in order.
  virtual std::vector<Result<Json>> GetMany(const std::vector<std::string>& links) = 0;
  /// GET with the raw response (status, ETag, headers) and no error on non-2xx.
  virtual Result<BmcResponse> GetRaw(std::string_view link) = 0;
  /// Every member of a collection, following Members@odata.nextLink (loop-guarded) and
  /// fetching link-only members concurrently. Uses $expand only where the service root
  /// advertises it, and drops it for good on a QueryNotSupported answer.
  virtual Result<std::vector<Json>> GetCollection(std::string_view link) = 0;
  /// Every member link of the Systems collection (from the service root; cached).
  virtual Result<std::vector<std::string>> SystemLinks() = 0;
  /// This node's ComputerSystem: the member its inventory names (bmc_system), or the only one.
  /// A BMC with several systems and none named is an error listing them (transport/
  /// system_select.h). Power, BIOS, resets and firmware scoping all go through it.
  virtual Result<std::string> SystemLink() = 0;

  /// PATCH with ETag handling: GET the same resource for its ETag and send If-Match verbatim
  /// (none when it has none); on 428 re-read and send If-Match (or "*" when the service still
  /// has no ETag); on 412 re-read and retry once. A 2xx whose body is an `error` object whose
  /// messages are not Critical (iLO SystemResetRequired) is a success with `messages`.
  virtual Result<BmcResponse> Patch(std::string_view link, const Json& body) = 0;
  /// POST an action (never with If-Match) and follow any task to its end. Waiting for the task
  /// ends at the task timeout (code "bmc.task.timeout", naming the task and its last state) or
  /// at the cancel signal (code kCancelledCode, naming the task the BMC carries on with).
  virtual Result<TaskOutcome> PostAction(std::string_view target, const Json& body,
                                         const TaskWatch& watch = {}) = 0;
  /// POST multipart/form-data (firmware push) and follow any task to its end, as PostAction.
  virtual Result<TaskOutcome> PostMultipart(std::string_view uri, const Json& update_parameters,
                                            const std::string& file,
                                            const TaskWatch& watch = {}) = 0;
  /// Follows a task started earlier (by a run that was stopped while it waited) to its end: the
  /// monitor first when there is one, then the Task. A task gone meanwhile is an unknown end.
  virtual Result<TaskOutcome> FollowTaskLink(const std::string& task_link,
                                             const std::string& monitor,
                                             const TaskWatch& watch = {}) = 0;
  /// Waits `d`, or less when the cancel signal comes (then an error, code kCancelledCode).
  virtual Status Pause(std::chrono::milliseconds d) = 0;
  /// Resets `system_link`'s ComputerSystem with a ResetType it advertises (inline
  /// @Redfish.AllowableValues, or its ActionInfo), falling back per ResetKind; waits for the
  /// power state. A graceful off that has not powered the system off in time is followed by
  /// ForceOff. Returns the ResetType(s) sent, e.g. "Off+On", and why a forced one followed a
  /// graceful one ("Off+ForceOff+On (Off had not powered it off after 300 s)").
  virtual Result<std::string> Reset(std::string_view system_link, ResetKind kind) = 0;
};

}  // namespace plumb::transport
