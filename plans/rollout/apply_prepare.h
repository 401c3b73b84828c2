#pragma once
/// Getting an apply ready, before any node is touched: which run `--resume` continues, which
/// nodes `--retry-failed` plans again, the schedulers of each rollout policy and what they say
/// now, the commit a saved plan is applied at, the checks it must pass there, its narrowing to
/// `--limit`, and the start of the run (cluster lock, run record, a lost run recovered from the
/// scheduler's drain reasons). cmd/apply.cc parses flags, asks, builds the real transports and
/// maps the result to an exit code; every decision is here, tested with fakes
/// (tests/plans/rollout/apply_prepare_test.cc).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "inventory/model.h"
#include "modules/drain/drainer.h"
#include "plans/observe/schedulers.h"
#include "plans/plan/plan.h"
#include "plans/plan/plan_check.h"
#include "plans/store/journal.h"
#include "schemas/result.h"

namespace plumb::plans {

/// What `apply --resume [RUN]` continues.
struct ResumeChoice {
  enum class Kind {
    kContinue,      ///< the journal has the run: continue it with the plan it recorded
    kAlreadyDone,   ///< the journal has it, and it finished: nothing to do
    kRecoverLost,   ///< the journal lost it: the plan file given stands in (RecoverFromScheduler)
  };
  Kind kind = Kind::kContinue;
  std::string run_id;
  Plan plan;                 ///< kContinue: the plan the run recorded
  std::string run_commit;    ///< kContinue: the commit the run applies (maybe not the plan's)
};

/// `requested` empty: the newest run of `journal` that is neither done nor failed. Refused with
/// what to do instead: nothing to resume; a plan file given for a run the journal has (it would
/// not be read); a run the journal lost, without its plan file. `journal_name` is for messages.
Result<ResumeChoice> ChooseRunToResume(Journal& journal, const std::string& requested,
                                       bool have_plan_file, const std::string& journal_name);

/// The nodes `run` left failed, as the journal recorded them.
Result<std::vector<std::string>> FailedNodesInJournal(Journal& journal, const std::string& run);
/// The nodes the schedulers show drained by `run` with a failure ("plumb:<run>:failed:..."),
/// for a run this journal does not have (another runner's). Sorted, each once.
Result<std::vector<std::string>> FailedNodesInSchedulers(const Schedulers& schedulers,
                                                         const std::string& run);

/// The commit a saved plan is applied at: a resumed run's own (`run_commit`); with `--ref`
/// (`ref` non-empty), the commit it names now, resolved by `resolve` (accepted later only if
/// it wants the same of every planned node); otherwise the plan's. `note` says when the ref's
/// commit is not the plan's.
struct ApplyCommit {
  std::string commit;
  std::string note;
};
Result<ApplyCommit> CommitForSavedPlan(
    const Plan& plan, const std::string& run_commit, const std::string& ref,
    const std::function<Result<std::string>(const std::string& ref)>& resolve);

/// Why a saved plan is refused at the commit applied: a headline for people and every finding.
struct PlanRefusal {
  std::string headline;
  Diagnostics diags;
};
/// A saved plan, checked against the commit it is applied at (CheckPlanAgainstCommit, with the
/// scheduler's view when it could be read). `ref` is the ref the operator named, for messages.
std::optional<PlanRefusal> CheckSavedPlan(const Plan& plan, const inventory::Cluster& cluster,
                                          const DesiredByNode& desired, const SchedulerView& view,
                                          const inventory::FileSource* files,
                                          const std::string& ref);

/// `apply PLAN --limit P`: the plan's nodes P names, batches formed again under the same
/// policies and the scheduler's view now. Refused when P names none of the plan's nodes or the
/// scheduler cannot be read (batches would count nodes out wrongly). `left_out`: the plan's
/// other nodes.
Result<Plan> NarrowPlanToLimit(const Plan& plan, const inventory::Cluster& cluster,
                               const DesiredByNode& desired, const SchedulerView& view,
                               const std::string& limit, std::vector<std::string>* left_out);

/// How the run starts: a new run (its record), one the journal has (reopened), or one the
/// journal lost (its record begun again, its nodes recovered from the schedulers).
struct RunStart {
  LockInfo lock;             ///< the cluster lock to take (run id, owner, expiry)
  bool in_journal = false;   ///< reopen lock.run
  bool recover_lost = false; ///< --resume of a run the journal lost
  RunRecord record;          ///< written when !in_journal
};
struct StartedRun {
  std::vector<std::string> notes;   ///< for people: a dead owner's lock taken over, recovery
  std::vector<std::string> adopt;   ///< recovered nodes the engine treats as in progress
};
/// Takes the cluster lock, then begins or reopens the run record, then (recover_lost) reads
/// back from the schedulers which nodes the run drained. On any refusal after the lock was
/// taken the lock is released again: a start either happens whole or leaves nothing behind.
Result<StartedRun> StartRun(Journal& journal, const Plan& plan, const RunStart& start,
                            const Schedulers& schedulers, const std::string& now);

}  // namespace plumb::plans
