#include "plans/session/apply_session.h"

#include <fmt/format.h>

#include "inventory/hostlist.h"
#include "plans/core/clock.h"
#include "plans/plan/plan_check.h"
#include "plans/plan/plan_json.h"
#include "plans/report/apply_summary.h"
#include "plans/report/plan_text.h"
#include "plans/rollout/apply_prepare.h"
#include "plans/rollout/lock_keeper.h"
#include "plans/store/apply_lock.h"

namespace plumb::plans {
namespace {

using Step = std::optional<Outcome>;   // nullopt: go on; else the session ends with it

// The time the cluster lock is written in: the store's clock (a shared store's server), this
// machine's when the store cannot say.
std::chrono::system_clock::time_point LockNow(Journal& j, ApplyWorld& world) {
  auto t = j.StoreNow();
  return t.ok() ? *t : world.Now();
}

class Session {
 public:
  Session(const ApplyRequest& req, Journal& journal, ApplyWorld& world, std::atomic<bool>* stop)
      : req_(req), journal_(journal), world_(world), stop_(stop), at_repo_(req.repo),
        at_ref_(req.ref) {}

  Outcome Run() {
    if (!req_.force_unlock.empty()) return ForceUnlock();
    for (Step (Session::*step)() : {&Session::ChoosePlan, &Session::RetryFailed,
                                    &Session::CheckSavedDigest, &Session::LoadCommit,
                                    &Session::JudgeTrust, &Session::CheckAgainstSchedulers,
                                    &Session::NarrowToLimit, &Session::ShowAndConfirm})
      if (Step end = (this->*step)()) return *end;
    return StartAndRun();
  }

 private:
  Outcome Fail(const Diagnostic& d) {
    world_.Err("plumb apply: " + d.ToString());
    return Outcome::kError;
  }
  Outcome FailAll(const Diagnostics& ds, const std::string& headline) {
    world_.Err("plumb apply: " + headline);
    for (const Diagnostic& d : ds.items()) world_.Err("  " + d.ToString());
    return Outcome::kError;
  }

  Outcome ForceUnlock() {
    auto released = ForceUnlockChecked(journal_, req_.force_unlock, req_.dead_owner,
                                       Rfc3339(LockNow(journal_, world_)), req_.host);
    if (!released) return Fail(released.error());
    world_.Out(fmt::format("released the lock of cluster {} held by run {} (host {}, pid {})\n",
                           released->cluster, req_.force_unlock, released->owner_host,
                           static_cast<long long>(released->owner_pid)));
    return Outcome::kOk;
  }

  // 1. The plan: from the journal (--resume), a file, or made now (--ref, --retry-failed).
  Step ChoosePlan() {
    if (req_.resume) {
      auto c = ChooseRunToResume(journal_, req_.resume_run, !req_.plan_file.empty(),
                                 req_.journal_name);
      if (!c) return Fail(c.error());
      run_id_ = c->run_id;
      if (c->kind == ResumeChoice::Kind::kAlreadyDone) {
        world_.Out(fmt::format("run {} is already done\n", run_id_));
        return Outcome::kOk;
      }
      if (c->kind == ResumeChoice::Kind::kContinue) {
        run_in_journal_ = true;
        plan_ = std::move(c->plan);
        run_commit_ = c->run_commit;   // the commit the run applies (maybe not the plan's)
      }
    }
    if (!run_in_journal_ && !req_.plan_file.empty()) {
      auto p = world_.ReadPlanFile(req_.plan_file);
      if (!p) return Fail(p.error());
      plan_ = *p;
    }
    plan_now_ = !req_.resume && req_.plan_file.empty();
    return std::nullopt;
  }

  // --retry-failed: the nodes the run left failed, from the journal, or (another runner's run)
  // from the drain reasons the schedulers of the repo at --ref show.
  Step RetryFailed() {
    if (req_.retry_failed.empty()) return std::nullopt;
    auto rec = journal_.GetRun(req_.retry_failed);
    if (!rec) return Fail(rec.error());
    Result<std::vector<std::string>> failed = std::vector<std::string>{};
    if (rec->has_value()) {
      failed = FailedNodesInJournal(journal_, req_.retry_failed);
    } else {
      inventory::LoadedCluster here = world_.Load(at_repo_, at_ref_);
      if (!here.ok()) {
        world_.Err(here.diags.ToText());
        return Outcome::kError;
      }
      failed = FailedNodesInSchedulers(world_.SchedulersOf(here.cluster), req_.retry_failed);
      world_.Err(fmt::format("plumb apply: run {} is not in {}; the scheduler names the node(s) "
                             "it left failed; planning them at {}",
                             req_.retry_failed, req_.journal_name, at_ref_));
    }
    if (!failed) return Fail(failed.error());
    if (failed->empty()) {
      world_.Out(fmt::format("run {} left no node failed: nothing to retry\n", req_.retry_failed));
      return Outcome::kOk;
    }
    retry_limit_ = inventory::CompressHostlist(*failed);
    if (rec->has_value()) {
      if (!req_.ref_given) at_ref_ = (*rec)->commit;   // the run's own commit
      if (!req_.repo_given && !(*rec)->repo.empty()) at_repo_ = (*rec)->repo;
    }
    world_.Err(fmt::format("plumb apply: retrying the node(s) run {} left failed: {}",
                           req_.retry_failed, retry_limit_));
    return std::nullopt;
  }

  Step CheckSavedDigest() {
    if (plan_now_) return std::nullopt;
    if (Status s = VerifyPlanDigest(plan_); !s) return Fail(s.error());
    if (auto d = CheckPlan(plan_); d.HasErrors()) return FailAll(d, "the plan is not a valid plan:");
    return std::nullopt;
  }

  // 2. The cluster repo at the commit to apply (a plan made now brings its own load). The repo
  //    is --repo when given, else the one the plan names: known_hosts and the identity are
  //    resolved against it, whatever the current directory.
  Step LoadCommit() {
    repo_ = at_repo_ != "." || plan_.source.repo.empty() ? at_repo_ : plan_.source.repo;
    if (plan_now_) {
      // --retry-failed plans its failed nodes; a --limit given too narrows that plan below. The
      // commit is judged by the signing policy before any node is read.
      auto p = world_.PlanNow(at_repo_, at_ref_, retry_limit_.empty() ? req_.limit : retry_limit_);
      if (!p) return Fail(p.error());
      plan_ = std::move(p->plan);
      lc_ = std::move(p->loaded);
      trust_ = std::move(p->trust);
      repo_ = at_repo_;
    } else {
      auto commit = CommitForSavedPlan(
          plan_, run_commit_, req_.ref_given ? req_.ref : std::string(),
          [&](const std::string& ref) { return world_.ResolveCommit(repo_, ref); });
      if (!commit) return Fail(commit.error());
      if (!commit->note.empty()) world_.Err("plumb apply: " + commit->note);
      lc_ = world_.Load(repo_, commit->commit);
    }
    if (!lc_.ok()) {
      world_.Err(lc_.diags.ToText());
      return Outcome::kError;
    }
    return std::nullopt;
  }

  // The commit applied, judged by the signing policy of its trusted base, before any node,
  // scheduler or journal run is touched.
  Step JudgeTrust() {
    if (trust_) return std::nullopt;
    auto t = world_.CheckTrust(repo_, lc_.cluster.source.commit, req_.trust_from);
    if (!t) return Fail(t.error());
    trust_ = std::move(t.value());
    return std::nullopt;
  }

  // 3. What the engine talks to: each rollout policy's own scheduler, and what they say now
  //    (for the checks below and for --limit's batches).
  Step CheckAgainstSchedulers() {
    schedulers_ = world_.SchedulersOf(lc_.cluster);
    fallback_ = world_.NoScheduler();
    view_ = ReadSchedulers(schedulers_);
    if (plan_now_) return std::nullopt;
    if (auto refused = CheckSavedPlan(plan_, lc_.cluster, lc_.desired, view_, lc_.files.get(),
                                      req_.ref))
      return FailAll(refused->diags, refused->headline);
    return std::nullopt;
  }

  // A saved plan (or the failed nodes) narrowed: only the plan's nodes that match, batches
  // formed again under the same policies and the scheduler's view now.
  Step NarrowToLimit() {
    if (req_.limit.empty() || req_.resume || (plan_now_ && retry_limit_.empty()))
      return std::nullopt;
    std::vector<std::string> left_out;
    auto narrowed = NarrowPlanToLimit(plan_, lc_.cluster, lc_.desired, view_, req_.limit, &left_out);
    if (!narrowed) return Fail(narrowed.error());
    plan_ = std::move(*narrowed);
    if (!left_out.empty())
      world_.Err(fmt::format("plumb apply: --limit {}: applying {} of the plan's nodes; left out: {}",
                             req_.limit, plan_.nodes.size(), inventory::CompressHostlist(left_out)));
    if (plan_.diags.HasErrors()) return FailAll(plan_.diags, "the narrowed plan has errors:");
    return std::nullopt;
  }

  // Asked unless there is nothing to apply or --auto-approve; false when not approved.
  bool Approved() {
    if (!plan_.HasApplicable() || req_.auto_approve) return true;
    switch (world_.Ask()) {
      case Answer::kYes: return true;
      case Answer::kNoTerminal:
        world_.Err("plumb apply: refusing to apply without confirmation: stdin is not a terminal "
                   "(pass --auto-approve once the plan is reviewed)");
        return false;
      case Answer::kNo: break;
    }
    world_.Err("plumb apply: not applied");
    return false;
  }

  // 4. Shown and confirmed (a resumed run was confirmed when it started).
  Step ShowAndConfirm() {
    if (!req_.plan_out.empty()) {
      if (Status st = world_.Write(req_.plan_out, SealPlanToFile(plan_)); !st.ok())
        return Fail(st.error());
    }
    if (!req_.resume) {
      if (!req_.json) world_.Out(report::PlanToText(plan_));
      if (!Approved()) return Outcome::kError;
      if (const std::string skipped = report::SkippedUnhealthyNote(plan_); !skipped.empty())
        world_.Err("plumb apply: " + skipped);
      if (!plan_.HasApplicable()) return NothingToApply();
    }
    if (!plan_.complete)
      world_.Err(fmt::format("plumb apply: warning: the plan is incomplete ({} node(s) were "
                             "unreadable and are left alone)", plan_.unreadable.size()));
    return std::nullopt;
  }

  Outcome NothingToApply() {
    if (!plan_.complete) {
      world_.Out(fmt::format("nothing to apply on the nodes read; {} node(s) could not be read\n",
                             plan_.unreadable.size()));
      return Outcome::kPartial;
    }
    world_.Out(plan_.HasChanges() ? "nothing to apply: every node with changes is left as it is "
                                    "(unhealthy)\n"
                                  : "nothing to apply: every node is in sync\n");
    return Outcome::kOk;
  }

  // A new run's record: the plan, the commit applied (the markers'), who and what vouched.
  RunRecord NewRecord(std::chrono::system_clock::time_point now) const {
    RunRecord r;
    r.id = run_id_;
    r.cluster = plan_.cluster;
    r.plan_digest = plan_.digest;
    r.plan_json = PlanToJson(plan_).dump();
    r.commit = lc_.cluster.source.commit;   // the commit applied (the markers'), maybe not the plan's
    if (plan_.source.commit != r.commit) r.plan_commit = plan_.source.commit;
    r.repo = repo_;
    r.who = req_.who;
    r.who.author = trust_->info.author;
    r.who.committer = trust_->info.committer;
    r.who.signer = trust_->signer ? trust_->signer->ToString() : trust_->note;
    r.started_at = Rfc3339(now);
    r.owner_host = req_.host;
    r.owner_pid = req_.pid;
    return r;
  }

  RolloutOptions Options(const StartedRun& started) const {
    RolloutOptions opts;
    opts.run_id = run_id_;
    opts.commit = lc_.cluster.source.commit;
    opts.resume = req_.resume && run_in_journal_;
    opts.owner_host = req_.host;
    opts.owner_pid = req_.pid;
    opts.owner_user = req_.user;
    opts.cluster = &lc_.cluster;
    opts.adopt = started.adopt;
    opts.policies = lc_.cluster.rollouts;   // the commit's: what the engine enforces
    for (const auto& [name, nd] : lc_.desired) {
      opts.desired[name] = nd.desired;
      opts.scope[nd.rollout].push_back(name);
      opts.stacks[name] = nd.stack;
    }
    opts.timing = req_.timing;
    opts.timing.command_timeout = std::chrono::seconds(lc_.cluster.ssh.command_timeout_s);
    return opts;
  }

  // 5. The lock, then the run record (nothing has been touched so far); 6. the run.
  Outcome StartAndRun() {
    const auto now = world_.Now();
    if (run_id_.empty()) run_id_ = NewRunId(now);
    RunStart start;
    const auto lock_taken = std::chrono::steady_clock::now();   // the lock's time counts from here
    const auto lock_now = LockNow(journal_, world_);
    start.lock = {plan_.cluster, run_id_, req_.host, req_.pid, Rfc3339(lock_now),
                  Rfc3339(lock_now + req_.lock_ttl), req_.process_start};
    start.in_journal = run_in_journal_;
    start.recover_lost = req_.resume && !run_in_journal_;
    if (!run_in_journal_) start.record = NewRecord(now);
    auto started = StartRun(journal_, plan_, start, schedulers_, Rfc3339(lock_now));
    if (!started) return Fail(started.error());
    for (const std::string& n : started->notes) world_.Err("plumb apply: " + n);
    // From here on, a store that stops answering is said at once, and what this run does about
    // it (the journal waits out its retry window, then every write fails at once).
    journal_.SetStoreObserver(
        [w = &world_, run = run_id_](const StoreEvent& e) { w->Err(StoreEventLine(e, run)); });
    LockKeeper keeper(journal_, start.lock, req_.lock_ttl, lock_taken,
                      {.say = [this](const std::string& line) { world_.Err("plumb apply: " + line); },
                       .stop = stop_});
    RolloutDeps deps;
    deps.journal = &journal_;
    deps.drainers = schedulers_.by_rollout;
    deps.drainer = schedulers_.by_rollout.empty() ? fallback_.get()
                                                  : schedulers_.by_rollout.begin()->second;
    deps.stop = stop_;
    deps.lock_expiring = [&keeper] { return keeper.Expiring(); };
    RolloutResult res = world_.Run(plan_, Options(*started), deps, lc_, repo_);
    for (const auto& d : res.diags.items()) world_.Err(d.ToString());
    if (!req_.json) world_.Out(report::ApplySummaryText(res, run_id_, req_.journal_name));
    return OutcomeOfRun(res);
  }

  const ApplyRequest& req_;
  Journal& journal_;
  ApplyWorld& world_;
  std::atomic<bool>* stop_;
  std::string at_repo_, at_ref_;   // where a plan made now is made (--retry-failed: the run's)
  std::string repo_;               // the repo applied from: known_hosts, identity, the record
  Plan plan_;
  std::string run_id_;
  std::string run_commit_;   // --resume: the commit the journaled run applies
  bool run_in_journal_ = false;
  bool plan_now_ = false;
  std::string retry_limit_;  // --retry-failed: the failed nodes, as a host list
  inventory::LoadedCluster lc_;
  std::optional<CommitTrust> trust_;
  Schedulers schedulers_;
  std::unique_ptr<modules::Drainer> fallback_;
  SchedulerView view_;
};

}  // namespace

std::vector<std::string> ApplyFlagConflicts(const std::set<std::string>& given, bool file) {
  std::vector<std::string> out;
  auto has = [&](const char* f) { return given.count(f) > 0; };
  if (has("--force-unlock")) {
    for (const char* f : {"--ref", "--limit", "--auto-approve", "--resume", "--retry-failed",
                          "--plan-out", "--reboot-timeout", "--reboot-grace", "--poll-max-ms",
                          "--task-timeout", "--power-timeout",
                          "--repo", "--format", "--trust-policy-from", "--approved-by",
                          "--lock-ttl"})
      if (has(f)) out.push_back(fmt::format("{} does nothing with --force-unlock (it only releases "
                                            "a lock; it takes --journal and --dead-owner)", f));
    if (file) out.push_back("a plan file does nothing with --force-unlock");
    return out;
  }
  if (has("--dead-owner")) out.push_back("--dead-owner confirms a --force-unlock; give both");
  if (has("--resume") && has("--retry-failed"))
    out.push_back("--resume continues a run, --retry-failed starts a new one: give one of them");
  if (has("--resume")) {
    for (const char* f : {"--limit", "--ref", "--auto-approve", "--plan-out", "--approved-by"})
      if (has(f))
        out.push_back(fmt::format("{} does nothing with --resume (a resumed run keeps its plan, "
                                  "its nodes and its commit, and was approved when it started)",
                                  f));
  }
  if (has("--reboot-grace") && !has("--resume"))
    out.push_back("--reboot-grace only matters to --resume (how long a reboot a crashed run "
                  "asked for may still be on its way)");
  if (has("--retry-failed") && file)
    out.push_back("--retry-failed plans the failed nodes anew; it takes no plan file");
  return out;
}

Outcome RunApplySession(const ApplyRequest& req, Journal& journal, ApplyWorld& world,
                        std::atomic<bool>* stop) {
  return Session(req, journal, world, stop).Run();
}

std::string StoreEventLine(const StoreEvent& e, const std::string& run) {
  using K = StoreEvent::Kind;
  const long long w = e.window.count();
  switch (e.kind) {
    case K::kUnreachable:
      return fmt::format(
          "plumb apply: the store {} does not answer ({}); waiting up to {}s (PLUMB_STORE_RETRY_S) "
          "for it. Meanwhile no step starts or ends: each waits to be recorded. Still down then, "
          "this run stops within about {}s plus the step under way plus 30s: nothing more starts, "
          "and what could not be recorded is left for plumb apply --resume {}",
          e.store, e.why, w, w, run);
    case K::kGaveUp:
      return fmt::format("plumb apply: the store {} has not answered for {}s ({}); stopping: "
                         "no new node or step starts, and plumb apply --resume {} continues once it "
                         "answers",
                         e.store, e.down_for.count(), e.why, run);
    case K::kBack:
      return fmt::format("plumb apply: the store {} answers again (after {}s)", e.store,
                         e.down_for.count());
  }
  return {};
}

Outcome OutcomeOfRun(const RolloutResult& res) {
  switch (res.outcome) {
    case RunState::kDone: return Outcome::kOk;
    case RunState::kInterrupted: return Outcome::kInterrupted;
    case RunState::kPaused:
    case RunState::kIncomplete: return Outcome::kPaused;
    case RunState::kFailed:    // some node failed, or the journal could not be written
    case RunState::kHalted:
    case RunState::kCrashed:
    case RunState::kRunning: break;
  }
  return Outcome::kRunFailed;
}

Result<PlannedNow> SealPlannedNow(PlannedNow now, const Diagnostics& run_diags) {
  now.plan.diags.Append(run_diags);
  now.plan.diags.Append(now.loaded.diags);   // warnings only (errors stopped the load)
  if (now.plan.diags.HasErrors()) return now.plan.diags.items().front();
  SealPlan(now.plan);
  return now;
}

}  // namespace plumb::plans
