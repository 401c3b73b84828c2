#pragma once
/// The module contract. A module owns one aspect of a node (kernel, NVIDIA driver, sysctl,
/// firmware...). It has:
///   - a probe: a POSIX sh snippet run in-band (all modules' snippets go to the node as ONE
///     script in ONE SSH round trip, see modules/probe_script.h) and/or Redfish reads;
///   - a pure parser from the probe's output to Facts (JSON, shape documented in
///     modules/<module>/facts.schema.json), tested on captured real outputs;
///   - a pure diff: desired state x facts -> actions (so check mode is true by construction);
///   - apply: one action -> commands over SSH or calls to the BMC; idempotent; values quoted;
///   - verify: by default, re-probe and expect an empty diff.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/model.h"
#include "modules/transport/shell.h"
#include "modules/transport/wait_progress.h"
#include "schemas/result.h"

namespace plumb::transport { class Bmc; }

namespace plumb::modules {

struct CheckResult;   // modules/check_result.h

using Facts = nlohmann::json;

/// The facts key where a module whose probe runs several commands ("parts") lists the parts it
/// could not read: [{"part": "smi", "code": "probe.nvidia_driver", "message": "nvidia-smi: ..."}].
/// The facts those parts would have given stay at their "not read" value (null, never guessed);
/// the facts of the other parts are kept. Written by modules/part_facts.h.
inline constexpr const char* kPartErrorsKey = "part_errors";

/// Everything that kept one module's observation on one node from being whole: the module's
/// error, or each part error its facts list; empty when it was read whole. Never throws (facts
/// may be any JSON, e.g. from a snapshot).
///
/// One rule for every verb: a module with problems is reported on its node (gather's text and
/// JSON), makes `gather` exit 3 (partial), and is neither planned, judged nor verified on that
/// node (plan and drift list the node as unreadable when it pins a key of that module, apply
/// refuses it), while the facts it did read are kept in the snapshot and shown.
std::vector<Diagnostic> ModuleProblems(const Result<Facts>& observed);
/// ModuleProblems as one line: "code: message; code: message" ("" when there are none).
std::string ModuleProblemText(const Result<Facts>& observed);

/// How much an action disturbs a node; ordered, a node's disruption is the max of its actions'.
enum class Disruption { kNone = 0, kServiceRestart = 1, kDrain = 2, kReboot = 3, kFirmwareFlash = 4 };
const char* DisruptionName(Disruption d);   // "none", "service-restart", "drain", "reboot", "firmware-flash"

/// One change to make on one node. A value (it goes into the plan file as JSON and back).
struct Action {
  std::string module;      ///< "nvidia_driver"
  std::string id;          ///< stable within the node's plan: "nvidia_driver.install"; keys the journal
  std::string key;         ///< desired-state key in user terms: "nvidia.driver", "sysctl.net.core.rmem_max"
  std::string pointer;     ///< the same as a JSON pointer into NodeDesired::desired: "/nvidia/driver"
  std::string summary;     ///< "install 550.90.07 (have 535.161.08)"
  nlohmann::json before;   ///< observed value (null if absent)
  nlohmann::json after;    ///< desired value
  Disruption disruption = Disruption::kNone;
  nlohmann::json params = nlohmann::json::object();   ///< what Apply needs beyond before/after

  nlohmann::json ToJson() const;
  static Result<Action> FromJson(const nlohmann::json& j);
};

/// Where a module reads and changes a node.
enum class Channel { kInBand, kBmc };

/// A module as data: the registry's row (modules/registry.cc). Everything outside a module's
/// folder that needs to know about it reads this - which desired keys it checks (the key ->
/// module map, validate's "pinned but unchecked" error, drift's subjects), which modules read
/// the BMC, the order of actions, the README's module table (`plumb modules`), the tests'
/// module lists - so adding a module is its folder, its fixtures and testbed fake, and one
/// registry line.
struct ModuleInfo {
  std::string_view name;                 ///< probe section marker, facts key, journal column
  /// The desired-state JSON pointers it checks, each with everything below it ("/sysctl",
  /// "/nvidia/driver"). Empty: a module that only reads (os, marker).
  std::vector<std::string_view> owns;
  Channel channel = Channel::kInBand;
  /// Modules whose actions must run before this one's on the same node (cuda after
  /// nvidia_driver). A cycle is caught by the registry's unit test.
  std::vector<std::string_view> after;
  std::string_view reads;                ///< what it reads, for people
  std::string_view changes;              ///< how it changes a node
  /// The most a change of one of its keys can disturb a node: what `plumb diff` of two commits
  /// and a plan's summary show before any node is read. A Diff's action may disturb less
  /// (loading a driver already installed), never more (the registry's unit test holds Diffs to it).
  Disruption disruption = Disruption::kNone;
  /// Keys under `owns` whose changes disturb differently from `disruption` (the longest prefix
  /// wins): {"/nvidia/persistence_mode", kNone} in nvidia_driver.
  struct KeyDisruption {
    std::string_view prefix;
    Disruption disruption;
  };
  std::vector<KeyDisruption> disruption_by_key;
  /// kState: it pins a state plumb converges (it has an Apply). kHealth: a check that passes or
  /// fails against the stack's thresholds (`health:`): nothing to apply; a failed check keeps a
  /// node out of service in a rollout and fails `plumb health` and `plumb acceptance`.
  enum class Kind { kState, kHealth };
  Kind kind = Kind::kState;
  /// Checks that load the GPUs or the fabric for seconds to minutes (a DCGM diagnostic, NCCL's
  /// all_reduce_perf) run only when asked - `plumb health`, `plumb acceptance`, the rollout's
  /// health step - through CheckScript; never in gather's probe, so reading a node stays cheap.
  bool on_demand = false;
  /// What plans/ reads in its facts, by what it means rather than by the module's name (each
  /// empty/false in every module but one, today):
  /// - the facts key naming the node's current boot (kernel: "boot_id"): watch keeps a node's
  ///   facts, and trusts its marker, only within one boot;
  std::string_view boot_id_key;
  /// - the facts key of the commit plumb last applied on the node (marker: "commit"): the
  ///   planner calls a change back to that commit's value a repair;
  std::string_view applied_commit_key;
  /// - the facts key of its firmware components, a list of {name or id, version} (firmware:
  ///   "components"): an acceptance report records them per node;
  std::string_view firmware_inventory_key;
  /// - its checks' measured value is the one the acceptance report charts per node
  ///   (nccl_bw: all_reduce bus bandwidth, GB/s).
  bool acceptance_chart = false;

  bool IsHealth() const { return kind == Kind::kHealth; }

  /// Does the desired-state pointer `p` fall under one of `owns`?
  bool Owns(std::string_view p) const;
  /// The disruption of changing `p` (a pointer this module owns): its key's, else the module's.
  Disruption DisruptionOf(std::string_view p) const;
  /// In words, for people (`plumb modules`, README): "reboot; fabricmanager: drain".
  std::string DisruptionText() const;
};

/// What Apply did, as a value (not a string to compare): done; staged (it takes effect at the
/// next reset, e.g. BIOS settings); nothing to do (already so); or failed, with the error.
struct ApplyOutcome {
  enum class Kind { kDone, kStaged, kNothingToDo, kFailed };
  Kind kind = Kind::kDone;
  std::string message;   ///< what happened, for people ("staged, applies on reset")
  Diagnostic failure;    ///< kFailed only

  bool ok() const { return kind != Kind::kFailed; }
  const Diagnostic& error() const { return failure; }
  static ApplyOutcome Done(std::string message = "done");
  static ApplyOutcome Staged(std::string message);
  static ApplyOutcome NothingToDo(std::string message);
  static ApplyOutcome Failed(Diagnostic error);
  /// OkStatus -> Done, an error -> Failed.
  static ApplyOutcome From(const Status& s, std::string done_message = "done");
  /// The outcome as a Status (for callers that only need ok/error).
  Status ToStatus() const;
};
const char* ApplyOutcomeName(ApplyOutcome::Kind k);   // "done", "staged", "nothing-to-do", "failed"

/// What Apply may touch. Either pointer may be null when that channel is unavailable.
struct NodeContext {
  const inventory::Node* node = nullptr;
  transport::Shell* shell = nullptr;
  transport::Bmc* bmc = nullptr;
  std::chrono::milliseconds command_timeout{std::chrono::minutes(30)};
  /// A long wait inside Apply (a firmware task) reports here after every look; the caller shows
  /// it (a TTY line, a heartbeat). May be empty.
  std::function<void(const transport::WaitProgress&)> progress;
  /// An operation the BMC carries on with even if plumb stops (a firmware update) is reported
  /// here as soon as the BMC accepted it, as JSON ({"task", "monitor", ...}): the engine
  /// journals it, and a resumed run passes it back in the action's params["in_flight"], so
  /// Apply follows that task instead of starting another. May be empty.
  std::function<void(const nlohmann::json&)> in_flight;
};

class Module {
 public:
  virtual ~Module() = default;
  /// The module as data (see ModuleInfo); the rest of the contract is behaviour.
  virtual const ModuleInfo& Info() const = 0;
  /// Stable name: the probe section marker, the facts key, the journal's module column.
  std::string_view Name() const { return Info().name; }
  const std::vector<std::string_view>& After() const { return Info().after; }

  /// In-band probe: a POSIX sh snippet, read-only, whose stdout this module's ParseProbe reads.
  /// Empty if the module has no in-band probe. It must not depend on desired state.
  virtual std::string ProbeScript() const { return {}; }
  /// An on-demand check's snippet (Info().on_demand) for the node's desired state, which sets its
  /// level, sizes and timeouts; read by ParseProbe like a probe's. Empty for other modules.
  virtual std::string CheckScript(const nlohmann::json& desired) const { return {}; }
  /// How long CheckScript(desired) may run on the node (its own `timeout`): the runner gives
  /// the round trip at least this, so a check is never cut short by the transport first.
  virtual std::chrono::seconds CheckTimeout(const nlohmann::json& desired) const {
    return std::chrono::seconds(0);
  }
  /// Pure: the snippet's stdout (and its exit status) -> facts, or a located error
  /// (code "probe.<module>": what was unexpected in the output). A snippet of several parts
  /// reads each part on its own and lists a part it cannot read under kPartErrorsKey rather
  /// than failing whole (modules/part_facts.h): one bad tool must not hide what the others said.
  virtual Result<Facts> ParseProbe(std::string_view out, int exit_status) const;

  /// Out-of-band probe through the node's BMC (firmware, BIOS, power), for Channel::kBmc.
  bool HasBmcProbe() const { return Info().channel == Channel::kBmc; }
  virtual Result<Facts> ProbeBmc(transport::Bmc& bmc) const;
  /// What ProbeBmc read, in a few words for `plumb bmc inventory`'s line of the node ("power
  /// On health OK"); "" says nothing there.
  virtual std::string BmcSummary(const Facts& facts) const { return {}; }

  /// Pure: does `desired` (the node's whole merged desired state) pin anything this module
  /// owns (Info().owns: a value that is neither null nor an empty map)?
  bool Wants(const nlohmann::json& desired) const;
  /// Pure: the actions that make `facts` agree with `desired`; empty when in sync.
  virtual std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const = 0;
  /// Diff, for facts read back from a snapshot or a journal rather than just parsed: facts
  /// without the shape this module's parser writes (edited by hand, from another plumb) are an
  /// error "facts.malformed" naming the module and what did not read, not an exception that
  /// ends the whole plan with no word of which node.
  Result<std::vector<Action>> DiffFacts(const nlohmann::json& desired, const Facts& facts) const;

  /// Pure, for Kind::kHealth modules: every check the node's `health:` settings ask for, passed
  /// or not, with what was measured against what is allowed (for `plumb health`, acceptance
  /// reports and the rollout's health step). Their Diff is the failed checks as actions that
  /// cannot be applied. Empty for other modules.
  virtual std::vector<CheckResult> Checks(const nlohmann::json& desired, const Facts& facts) const;

  /// Carries out one action (from this module's Diff). Idempotent: running it twice is harmless.
  /// Stopped by the cancel signal (Ctrl-C) in a wait, it fails with code
  /// transport::kCancelledCode: the caller records the step as interrupted, not failed.
  virtual ApplyOutcome Apply(NodeContext& ctx, const Action& action) const;
};

using ModulePtr = std::unique_ptr<Module>;

}  // namespace plumb::modules
