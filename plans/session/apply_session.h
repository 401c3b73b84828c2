#pragma once
/// `plumb apply`'s session, from checked flags to the run's outcome: a lock released by
/// --force-unlock; the plan (the journal's for --resume, a file, or made now for --ref and
/// --retry-failed, whose failed nodes come from the journal or the schedulers); the commit it is
/// applied at and the checks it must pass there; --limit; the plan shown and confirmed; the
/// cluster lock and the run record; the lock kept alive while the rollout runs, store outages
/// said as they happen; the summary. Every side effect cmd/ owns (reading files and the repo,
/// planning over SSH, the schedulers, the terminal, the transports the engine drives) is behind
/// ApplyWorld; the store is the Journal cmd opened. Tested with fakes
/// (tests/plans/session/apply_session_test.cc).
#include <atomic>
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "inventory/load.h"
#include "plans/observe/schedulers.h"
#include "plans/plan/plan.h"
#include "plans/rollout/rollout.h"
#include "plans/store/journal.h"
#include "plans/store/run_who.h"
#include "plans/trust/commit_trust.h"
#include "schemas/exit_codes.h"
#include "schemas/result.h"

namespace plumb::plans {

/// What the operator asked, once the flags parsed and passed their conflict rules.
struct ApplyRequest {
  std::string plan_file;
  bool resume = false;
  std::string resume_run;      ///< --resume RUN ("" = the latest unfinished)
  std::string retry_failed;    ///< --retry-failed RUN
  std::string force_unlock;    ///< --force-unlock RUN
  std::string dead_owner;      ///< --dead-owner HOST:PID
  std::string limit;
  std::string repo = ".";      ///< --repo (or its default)
  std::string ref;             ///< --ref (or its default)
  bool repo_given = false;     ///< --repo was on the command line
  bool ref_given = false;      ///< --ref was on the command line
  bool auto_approve = false;
  bool json = false;           ///< --format json: no plan text, no summary (events only)
  std::string plan_out;
  std::string trust_from;
  std::chrono::seconds lock_ttl{600};
  RolloutTiming timing;        ///< command_timeout is the cluster's, set here
  std::string journal_name;    ///< the store as messages name it (no password)
  std::string host;            ///< this machine, this process: the lock's and the run's owner
  int64_t pid = 0;
  std::string process_start;   ///< the owner process's start (plans/core/process_identity.h)
  std::string user;
  RunWho who;                  ///< for a new run's record (author, committer, signer added here)
};

/// A plan made now (apply --ref, --retry-failed) by `plumb plan`'s own read run, with the repo
/// load it planned from (apply carries out that very commit) and the commit's trust verdict.
struct PlannedNow {
  Plan plan;   ///< sealed
  inventory::LoadedCluster loaded;
  std::optional<CommitTrust> trust;
};

/// A plan made now, ready for the session: the read run's diagnostics (`run_diags`) and the
/// load's warnings added to the plan's, as `plumb plan` shows them; when any is an error, the
/// first of them all (as apply always said it), else the plan sealed (its digest set).
Result<PlannedNow> SealPlannedNow(PlannedNow now, const Diagnostics& run_diags);

/// The operator's answer to "Apply this plan?".
enum class Answer { kYes, kNo, kNoTerminal };

/// What the session reaches outside itself; cmd/apply.cc fills it with the real ones.
class ApplyWorld {
 public:
  virtual ~ApplyWorld() = default;
  virtual Result<Plan> ReadPlanFile(const std::string& path) = 0;
  /// Plans the nodes `limit` names at `ref` of `repo` (the request's trust policy and modules).
  virtual Result<PlannedNow> PlanNow(const std::string& repo, const std::string& ref,
                                     const std::string& limit) = 0;
  /// The cluster repo at `ref`, committed files only.
  virtual inventory::LoadedCluster Load(const std::string& repo, const std::string& ref) = 0;
  virtual Result<std::string> ResolveCommit(const std::string& repo, const std::string& ref) = 0;
  virtual Result<CommitTrust> CheckTrust(const std::string& repo, const std::string& commit,
                                         const std::string& trust_from) = 0;
  /// The real drainers of `cluster`'s rollout policies.
  virtual Schedulers SchedulersOf(const inventory::Cluster& cluster) = 0;
  /// A drainer for nodes no policy names (no scheduler).
  virtual std::unique_ptr<modules::Drainer> NoScheduler() = 0;
  virtual Answer Ask() = 0;
  virtual Status Write(const std::string& path, const std::string& text) = 0;
  virtual void Err(const std::string& line) = 0;   ///< one line for stderr
  virtual void Out(const std::string& text) = 0;   ///< text for stdout, as is
  virtual std::chrono::system_clock::time_point Now() = 0;
  /// Runs the rollout: cmd adds the transports (shells and BMCs of `loaded`'s cluster,
  /// known_hosts of `repo`), the prober, the leases, the clock, the observer and the signal
  /// handlers to `deps`.
  virtual RolloutResult Run(const Plan& plan, const RolloutOptions& opts, RolloutDeps& deps,
                            const inventory::LoadedCluster& loaded, const std::string& repo) = 0;
};

/// Every flag apply accepts acts in the mode it is given in, or is refused: none is silently
/// ignored. `given`: the flags on the command line ("--resume"); `plan_file`: one was given.
/// Returns the refusals, one line each.
std::vector<std::string> ApplyFlagConflicts(const std::set<std::string>& given, bool plan_file);

/// The whole session; the outcome is the apply row of the exit code table.
Outcome RunApplySession(const ApplyRequest& req, Journal& journal, ApplyWorld& world,
                        std::atomic<bool>* stop);

/// The line a store outage gets on stderr, with what run `run` does meanwhile and after.
std::string StoreEventLine(const StoreEvent& e, const std::string& run);

/// A run's outcome as the apply row of the exit code table.
Outcome OutcomeOfRun(const RolloutResult& res);

}  // namespace plumb::plans
