#pragma once
/// FakeCluster: a small simulated cluster for rollout tests, in ninja's FakeCommandRunner style.
/// One object plays the scheduler (Drainer), the gather of one node (Prober) and the transport
/// (NodeTransport + a Shell per node), over one shared state, and records every call that
/// changes something in `calls()` ("n1: drain plumb:...", "n1: set kernel k2", "n1: reboot").
///
/// Nodes run "jobs" until a fake time; a change made while a job runs or while the node is not
/// drained is recorded in `violations()` (the testbed's check_drained, in memory). Reboots take
/// `reboot_seconds` of fake time; values of "reboot" modules take effect only at the next boot.
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "modules/drain/drainer.h"
#include "modules/module.h"
#include "plans/rollout/rollout.h"
#include "fakes/fake_clock.h"

namespace plumb::fakes {

struct FakeNode {
  std::string name;
  std::map<std::string, std::string> running;     ///< module -> value in effect
  std::map<std::string, std::string> installed;   ///< module -> installed, effective at boot
  int boot = 1;
  bool drain = false;
  std::string reason;
  plans::Clock::TimePoint job_until{};            ///< a job runs until then
  bool rebooting = false;
  plans::Clock::TimePoint up_at{};
  // Fault knobs.
  bool never_returns = false;     ///< a reboot never comes back
  bool apply_fails = false;       ///< every "set" exits 1
  bool evictable = false;         ///< its job ends when evicted (a Kubernetes pod), once drained
  int evictions = 0;              ///< Evict calls on it (kept out of calls())
  int health_exit = 0;            ///< exit status of health gates
  bool unreachable = false;       ///< ssh refused, probe fails
  bool ignore_reboot = false;     ///< `reboot` exits 0 but nothing happens
  bool admin_down = false;        ///< set down by an admin (reason in `reason`), ssh still up
  bool drain_errs = false;        ///< Drain takes effect but reports an error (a timed-out call)
  int boot_id_unreadable = 0;     ///< this many boot-id reads fail (ssh gone at that moment)
  std::string malformed_module;   ///< Probe gives this module a numeric "value" (Diff cannot read it)
  std::string marker;             ///< marker JSON written by plumb
  long long reason_since = 0;     ///< when the reason was set (fake unix seconds)
  plans::Clock::TimePoint release_at{};   ///< another run returns it then (0: never)
  std::string comment;                    ///< the scheduler's free text (claims live here)
  plans::Clock::TimePoint other_drain_at{};     ///< another run drains it then (0: never)
  plans::Clock::TimePoint other_unclaim_at{};   ///< another run drops its claim then
  modules::StackTag tag;          ///< the stack the scheduler shows on it
  bool refuse_tag = false;        ///< SetStack fails (not "unavailable": a refusal)
};

class FakeCluster final : public modules::Drainer, public plans::Prober,
                          public plans::NodeTransport {
 public:
  explicit FakeCluster(FakeClock& clock) : clock_(clock) {}

  /// Adds a node whose modules have these running values.
  FakeNode& Add(const std::string& name, std::map<std::string, std::string> values);
  FakeNode& node(const std::string& name) { return nodes_.at(name); }
  /// Starts a job on `node` that runs for `d` of fake time.
  void RunJob(const std::string& node, std::chrono::seconds d);

  std::vector<std::string> calls() const;
  /// Calls on one node, without the "node: " prefix.
  std::vector<std::string> CallsOf(const std::string& node) const;
  /// How many calls on `node` start with `prefix`.
  int Count(const std::string& node, const std::string& prefix) const;
  std::vector<std::string> violations() const;
  /// The most nodes ever unavailable (drained or down) at once.
  int max_unavailable_seen() const { return max_out_; }
  int reboot_seconds = 3;
  /// Outside interference: when the key node is resumed, an admin drains the value node at
  /// that very moment (reason "admin: <node>").
  std::map<std::string, std::string> drain_on_resume;
  /// Another plumb run: when plumb drains the key node, that run drains the value node at the
  /// same moment (reason "plumb:<other_run>:drain"), and returns it to service `other_holds`
  /// of fake time later.
  std::map<std::string, std::string> other_run_drains;
  std::string other_run = "20261231-000000-aaaa";
  std::chrono::seconds other_holds{120};
  /// The scheduler cannot be read or written until then (fake time): Query, Drain and Resume
  /// fail with modules::kSchedulerUnavailable, like sinfo --json with slurmctld down.
  plans::Clock::TimePoint scheduler_down_until{};
  /// Drain calls made, and Query calls answered, while the scheduler was down (must stay 0/0
  /// answered: a down scheduler never answers).
  int calls_while_down = 0;
  /// The scheduler has not heard from these nodes until then (fake time): down and
  /// unresponsive, as Slurm shows every node right after slurmctld restarts.
  std::map<std::string, plans::Clock::TimePoint> unresponsive_until;
  /// Resume of these nodes is refused (Slurm's "Invalid node state specified").
  std::set<std::string> refuse_resume;
  /// Another plumb run racing for the same slot through claims: when plumb claims the key
  /// node, that run has just claimed the value node (same second, run `other_run`). If
  /// `other_claim_drains`, it read the scope before plumb's claim, saw room, and drains the
  /// value node `other_drain_after` later (holding it `other_holds`); otherwise it saw plumb's
  /// claim as well and drops its own `other_drain_after` later, draining nothing.
  std::map<std::string, std::string> other_run_claims;
  bool other_claim_drains = true;
  std::chrono::seconds other_drain_after{1};
  /// Claims written and cleared, in order: "n01: claim <run>", "n01: unclaim" (kept apart
  /// from calls(), which lists what changes service).
  std::vector<std::string> claims() const;
  /// Stack tags set, and what each node showed when it was resumed, in order:
  /// "n1: stack (none)", "n1: stack s@abc", "n1: resume showing s@abc" (kept apart from calls()).
  /// A change ("set") on a node that shows a stack is a violation.
  std::vector<std::string> stack_log() const;

  // Drainer
  std::string_view Name() const override { return "fake"; }
  Result<std::map<std::string, modules::SchedulerNode>> Query(
      const std::vector<std::string>& nodes) override;
  Status Drain(const std::string& node, const std::string& reason) override;
  Status Resume(const std::string& node) override;
  Status Evict(const std::string& node) override;
  bool SharesClaims() const override { return true; }
  Status SetClaim(const modules::SchedulerNode& current, const modules::NodeClaim& claim) override;
  bool ShowsStacks() const override { return true; }
  Status SetStack(const modules::SchedulerNode& current, const modules::StackTag& tag) override;
  // Prober
  plans::NodeFacts Probe(const std::string& node) override;
  // NodeTransport
  Result<std::unique_ptr<transport::Shell>> Connect(const std::string& node) override;
  Status PowerCycle(const std::string& node) override;

  /// What a node's shell does with `command` (FakeShell forwards here).
  Result<transport::CommandOutput> RunOn(const std::string& node, std::string_view command);

 private:
  void TickLocked(FakeNode& n);
  void Log(const std::string& node, const std::string& what);
  void CountOutLocked();
  void RebootLocked(FakeNode& n);
  /// While the scheduler is down: counts the call and gives the error a write gets.
  std::optional<Diagnostic> SchedulerDownLocked();

  FakeClock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, FakeNode> nodes_;
  std::vector<std::string> calls_;
  std::vector<std::string> violations_;
  std::vector<std::string> claims_;
  std::vector<std::string> stack_log_;
  int max_out_ = 0;
};

/// A module owning desired key "/<name>" (a string). Facts: {"value": running, "installed": x}.
/// Diff: "<name>.install" when installed differs from desired; for a reboot module,
/// "<name>.activate" (no-op apply, the reboot does it) when installed but not yet running.
/// Apply sends "set <name> <value> [reboot]" to the node's shell.
class FakeModule final : public modules::Module {
 public:
  FakeModule(std::string name, modules::Disruption d)
      : name_(std::move(name)), pointer_("/" + name_), d_(d) {
    info_.name = name_;
    info_.owns = {pointer_};
  }
  FakeModule(const FakeModule&) = delete;   // info_ points into this object
  const modules::ModuleInfo& Info() const override { return info_; }
  std::vector<modules::Action> Diff(const nlohmann::json& desired,
                                    const modules::Facts& facts) const override;
  modules::ApplyOutcome Apply(modules::NodeContext& ctx,
                              const modules::Action& action) const override;

 private:
  std::string name_, pointer_;
  modules::Disruption d_;
  modules::ModuleInfo info_;
};

/// Node leases in memory, expiring in the fake clock (plans/rollout/node_lease.h's semantics).
class FakeLeases final : public plans::NodeLeases {
 public:
  explicit FakeLeases(FakeClock& clock) : clock_(clock) {}
  /// Acquire on these nodes fails as an unreachable node does (connection refused).
  std::set<std::string> unreachable;
  Result<plans::LeaseReply> Acquire(const std::string& node, const plans::LeaseHolder& me,
                                    std::chrono::seconds ttl) override;
  Result<plans::LeaseReply> Renew(const std::string& node, const plans::LeaseHolder& me,
                                  std::chrono::seconds ttl) override;
  Status Release(const std::string& node, const plans::LeaseHolder& me) override;
  /// Another run holds `node` for `ttl` from now.
  void Hold(const std::string& node, const std::string& run, std::chrono::seconds ttl);
  /// The run holding `node` now ("" when none), and every (node, op, run) call made.
  std::string HolderOf(const std::string& node);
  std::vector<std::string> log();

 private:
  long long NowUnix() const;
  FakeClock& clock_;
  std::mutex mu_;
  std::map<std::string, plans::LeaseHolder> held_;
  std::vector<std::string> log_;
};

}  // namespace plumb::fakes
