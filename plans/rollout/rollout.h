#pragma once
/// The apply state machine: carries out a Plan batch by batch, rolling with drain.
///
/// Per batch, its nodes run in parallel (a thread each), never more than the policy's
/// max_unavailable out at once, counting nodes already drained or down (re-read from the Drainer
/// before each batch). Per node:
///   lease      take the node's lease (plans/rollout/node_lease.h): held by another live run -> "busy",
///              left alone and reported; a node another plumb run has drained and not failed
///              ("plumb:<other>:<step>") is busy too
///   probe      re-probe; a facts digest other than the plan's -> skipped as "stale"; the
///              plan's actions must follow from the commit's desired state and these facts
///   claim      the node claimed in the scheduler (modules/drain/claim.h), then its scope read:
///              nodes out + live claims must fit max_unavailable with it, else the claim is
///              cleared and the node deferred, untouched (runs of other journals share the budget)
///   drain      scheduler drain, reason "plumb:<run>:drain" (an admin's drain is left alone;
///              a node a failed run left drained is taken over)
///   wait-drained   until no job runs on it (policy timeout; pending jobs are not "done")
///   apply:<id> each action in order through its module (Module::Apply)
///   reboot     when an action needs one: `reboot` over SSH, or the BMC when SSH is gone or
///              firmware needs a power cycle; then wait-boot: a NEW boot id
///   verify     re-probe; the node's diff must be empty
///   health:checks  the health modules the node pins (DCGM, NCCL bandwidth, GPU and fabric
///              errors; plans/rollout/health_run.h): a failed check fails the node, named in its reason
///   health:<n> the policy's gate commands, with its timeout
///   stack:clear   before the first change (after the drain): the scheduler shows no stack on
///              the node, so no job that asks for the old stack lands on it half-way
///   marker     /var/lib/plumb/marker.json (commit, run, time)
///   stack:set  the scheduler shows the commit's stack on it (modules/drain/stack_tag.h)
///   resume     back to service, unless an admin had drained it before plumb did
/// Every step is journaled before (intent) and after (outcome). A failed node stays drained with
/// reason "plumb:<run>:failed:<step>: <error's last line>". The canary batch stops the rollout on
/// any failure; past max_failures no new node starts; outside the maintenance window no node
/// starts. A scheduler that cannot be read is never "no node is out": nothing is admitted, the
/// engine waits (with backoff, saying so) up to the policy's scheduler_timeout, then pauses the
/// run (resumable); it never counts as a node failure. Waived differences are never changed and
/// verify does not expect them changed.
/// With `resume`, steps the journal shows done are skipped and a step with an intent but no
/// outcome is re-checked (re-probe, boot id) before it runs again, so nothing runs twice.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/model.h"
#include "modules/drain/drainer.h"
#include "modules/module.h"
#include "modules/transport/shell.h"
#include "plans/core/clock.h"
#include "plans/plan/drain_reason.h"
#include "plans/plan/plan.h"
#include "plans/plan/planner.h"
#include "plans/rollout/node_lease.h"
#include "plans/rollout/observer.h"
#include "plans/store/journal.h"
#include "plans/store/run_state.h"
#include "schemas/result.h"

namespace plumb::plans {

/// Re-reads one node's facts (the gather of one node): used for the stale check and verify.
class Prober {
 public:
  virtual ~Prober() = default;
  /// The node's facts now, digest included; `readable` false with the reason when it can't.
  virtual NodeFacts Probe(const std::string& node) = 0;
};

/// How the engine reaches a node outside its modules: a shell (boot id, reboot, health gates,
/// the marker, and the modules' own commands) and the BMC.
class NodeTransport {
 public:
  virtual ~NodeTransport() = default;
  /// A fresh connection (the engine reconnects after a reboot).
  virtual Result<std::unique_ptr<transport::Shell>> Connect(const std::string& node) = 0;
  /// The node's BMC for modules that need it, or nullptr.
  virtual transport::Bmc* Bmc(const std::string& node) { return nullptr; }
  /// Power-cycles the node through its BMC; an error when it has none.
  virtual Status PowerCycle(const std::string& node) = 0;
};

using ModuleLookup = std::function<const modules::Module*(std::string_view name)>;
/// Test hook, called at every journal write with "<step>.intent" / "<step>.outcome" (the step
/// without its ":suffix"). Returning true means "the process dies here": nothing more is written
/// or done. cmd/ wires it to PLUMB_CRASH_AT (kill -9 itself) when PLUMB_TEST_HOOKS=1
/// (plans/session/test_hooks.h).
using CrashHook = std::function<bool(const std::string& point)>;

struct RolloutTiming {
  std::chrono::milliseconds poll_initial{250};   ///< first wait between polls
  std::chrono::milliseconds poll_max{5000};      ///< backoff cap
  std::chrono::seconds reboot_timeout{900};      ///< until a new boot id must show
  /// On resume, how long a journaled-but-unconfirmed reboot may still be on its way before
  /// plumb issues it again.
  std::chrono::seconds reboot_grace{60};
  std::chrono::seconds resume_timeout{300};      ///< until the scheduler sees the node respond
  std::chrono::milliseconds command_timeout{120000};   ///< boot id, reboot, marker
  /// When the budget is spent by nodes plumb is not working on, how long to keep re-reading
  /// the scheduler before halting ("max_unavailable reached").
  std::chrono::milliseconds budget_wait{30000};
  /// Longest wait between reads of a scheduler that cannot be read.
  std::chrono::milliseconds scheduler_poll_max{30000};
  /// A node lease lasts this long unless renewed; renewed this often while the run works.
  std::chrono::seconds lease_ttl{900};
  std::chrono::milliseconds lease_renew{60000};
  /// While a step waits (jobs to finish, a reboot, the scheduler), a progress event this often.
  std::chrono::seconds heartbeat{30};
};

struct RolloutOptions {
  std::string run_id;
  /// The commit applied: what the node markers record. "" = the plan's. Differs from the
  /// plan's when a reviewed plan is applied at the merge commit (plans/plan/plan_check.h).
  std::string commit;
  bool resume = false;              ///< continue run_id from the journal
  std::string owner_host;
  int64_t owner_pid = 0;
  std::string owner_user;
  /// The rollout policies of the commit the plan names (what the engine enforces); a policy
  /// missing here falls back to the plan's copy (tests). cmd/ refuses a plan whose copy differs.
  std::map<std::string, inventory::RolloutPolicy> policies;
  /// Every node under each rollout policy (for max_unavailable, which counts nodes already
  /// out). When a policy is missing here its scope is the plan's own nodes plus in-sync ones.
  std::map<std::string, std::vector<std::string>> scope;
  /// The cluster, for modules' NodeContext (node address, labels); may be null.
  const inventory::Cluster* cluster = nullptr;
  /// Each node's full desired state for verify; when a node is missing, its plan's actions
  /// (pointer -> after) stand in.
  std::map<std::string, nlohmann::json> desired;
  /// The stack each node runs at the commit applied (its groups' `stack`), for the tags that
  /// show it to the scheduler (modules/drain/stack_tag.h): cleared before a node's first change,
  /// set after its marker, and set on the plan's in-sync nodes as the run starts. A node
  /// missing here keeps whatever tags it has.
  std::map<std::string, std::string> stacks;
  /// Nodes plumb drained in this run that the journal does not know about (a lost journal):
  /// treated as in progress, every step re-checked.
  std::vector<std::string> adopt;
  RolloutTiming timing;
};

/// How one node ended.
struct NodeOutcome {
  std::string node;
  NodeState status = NodeState::kNotStarted;
  std::string step;     ///< the last step (the failing one for "failed")
  std::string error;
  bool left_drained = false;
};

struct RolloutResult {
  std::string run;
  /// Never kRunning. kCrashed only when the crash test hook fired.
  RunState outcome = RunState::kDone;
  std::vector<NodeOutcome> nodes;
  std::string summary;          ///< one line: "6 done, 1 failed (gpu003: ...), 1 stale"
  std::string halt_reason;      ///< why no new node started, when halted/paused
  std::string next_window;      ///< RFC 3339, when paused by the window
  bool journal_failed = false;  ///< the journal could not be written: the run stopped
  Diagnostics diags;
};

struct RolloutDeps {
  Journal* journal = nullptr;
  /// The scheduler of each rollout policy, by policy name; `drainer` serves the others.
  std::map<std::string, modules::Drainer*> drainers;
  modules::Drainer* drainer = nullptr;
  /// Node leases; null only in tests that do not look at them.
  NodeLeases* leases = nullptr;
  Prober* prober = nullptr;
  NodeTransport* transport = nullptr;
  ModuleLookup modules;
  /// Every module, for the health step: the Kind::kHealth ones a node's desired state pins run
  /// their checks there (plans/rollout/health_run.h). Empty: no health checks (tests of other steps).
  std::vector<const modules::Module*> all_modules;
  Clock* clock = nullptr;
  Observer* observer = nullptr;                 ///< may be null
  const std::atomic<bool>* stop = nullptr;      ///< set by SIGINT/SIGTERM; may be null
  /// True once the cluster lock is lost, cannot be renewed (a store that does not answer), or
  /// may run out (not renewed for most of its ttl: a process stopped and continued): the run
  /// stops as if interrupted, each node before its next step, and node leases are no longer
  /// renewed, so a runner that takes it over after expiry never finds it still acting or
  /// holding a node. May be empty.
  std::function<bool()> lock_expiring;
  CrashHook crash;                              ///< may be empty
};

/// Runs (or, with opts.resume, continues) the rollout of `plan`. The run must already be in the
/// journal (BeginRun) and the cluster lock held: cmd/apply does both.
RolloutResult RunRollout(const Plan& plan, const RolloutOptions& opts, RolloutDeps& deps);

/// A new run id: "YYYYMMDD-HHMMSS-xxxx" (UTC, 4 random hex), sortable, safe in a drain reason.
std::string NewRunId(Clock::TimePoint now);

/// The stand-in desired state made of a node plan's actions (each pointer set to its `after`).
nlohmann::json DesiredFromActions(const NodePlan& node);

}  // namespace plumb::plans
