// plumb apply: carry out a plan rolling-with-drain (plans/rollout), journaled, resumable.
//   plumb apply PLAN.json [--limit P]     a saved plan: digest checked, then checked against the
//                                         commit it names (policies, batches, desired values);
//                                         --limit narrows it (batches formed again); shown and
//                                         confirmed unless --auto-approve
//   plumb apply [--ref REF] [--limit P]   plan now (plumb plan's own read run), show the very
//                                         text `plumb plan` prints, ask y/N
//   plumb apply --resume [RUN] [PLAN.json]  continue a run from the journal (+ Slurm's drain
//                                         reasons naming the run, + node markers)
//   plumb apply --retry-failed RUN        plan the nodes RUN left failed again (at RUN's commit
//                                         unless --ref), show, confirm, apply
//   plumb apply --force-unlock RUN [--dead-owner HOST:PID]   release a dead run's lock
// This file holds the flags, the prompt, the signals and the outcome -> exit code table; the
// rules live in plans/ (plan_check, apply_lock, recover, rollout).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "cmd/apply.h"
#include "cmd/apply_deps.h"
#include "cmd/bmc_factory.h"
#include "cmd/color.h"
#include "cmd/command.h"
#include "cmd/repo_load.h"
#include "cmd/read_run.h"
#include "cmd/ssh_factory.h"
#include "cmd/subcommands.h"
#include "inventory/hostlist.h"
#include "inventory/load.h"
#include "inventory/version.h"
#include "modules/registry.h"
#include "modules/transport/cancel_signal.h"
#include "modules/transport/local_shell.h"
#include "plans/store/apply_lock.h"
#include "plans/rollout/apply_prepare.h"
#include "plans/core/clock.h"
#include "plans/observe/gather.h"
#include "plans/store/journal.h"
#include "plans/rollout/lock_keeper.h"
#include "plans/store/store.h"
#include "plans/rollout/node_lease.h"
#include "plans/plan/plan_check.h"
#include "plans/plan/plan_json.h"
#include "plans/plan/planner.h"
#include "plans/core/process_identity.h"
#include "plans/report/apply_summary.h"
#include "plans/report/plan_text.h"
#include "plans/rollout/rollout.h"
#include "plans/store/run_who.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kApplyVerb = "apply";
namespace {

std::atomic<bool> g_stop{false};
// Ends the BMC waits (a firmware task, a reset's power state) at the first signal: a step
// waiting on one is journaled interrupted, its task with it, and --resume follows that task.
transport::CancelSignal* g_cancel = nullptr;
// Looked up before any signal can come: the handler only reads it.
const int kInterruptedCode = ExitCodeFor(kApplyVerb, Outcome::kInterrupted);
std::atomic<int> g_signals{0};

extern "C" void OnSignal(int) {
  // First Ctrl-C: finish or abandon in-flight steps, journal, exit 130. Second: leave now (the
  // journal already holds every intent; --resume re-checks).
  if (g_signals.fetch_add(1) >= 1) _exit(kInterruptedCode);
  g_stop = true;
  if (g_cancel) g_cancel->Set();   // async-signal-safe: an atomic store and one write(2)
}

void ApplyErr(const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); }

int ApplyFail(const Diagnostic& d) {
  ApplyErr("plumb apply: " + d.ToString());
  return ExitCodeFor(kApplyVerb, Outcome::kError);
}

int FailAll(const Diagnostics& ds, const std::string& headline) {
  ApplyErr("plumb apply: " + headline);
  for (const Diagnostic& d : ds.items()) ApplyErr("  " + d.ToString());
  return ExitCodeFor(kApplyVerb, Outcome::kError);
}

// Every flag apply accepts acts in the mode it is given in, or is refused here: none is
// silently ignored. Returns the refusals.
std::vector<std::string> FlagConflicts(const ApplyArgs& a) {
  std::vector<std::string> out;
  auto has = [&](const char* f) { return a.given.count(f) > 0; };
  const bool file = !a.plan_file.empty();
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

Result<plans::Plan> ReadPlanFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) return Diagnostic::Error("apply.plan", "cannot read plan file " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return Diagnostic::Error("apply.plan", path + " is not JSON");
  return plans::PlanFromJson(j);
}

std::string Rfc(std::chrono::system_clock::time_point t) { return plans::Rfc3339(t); }

// The test hooks of the integration tests, honoured only with PLUMB_TEST_HOOKS=1 (a stray
// variable in production does nothing), at each point the engine names ("apply.intent",
// "reboot.outcome"...):
//   PLUMB_CRASH_AT=<point>:<n>   kill plumb -9 the n-th time <point> is reached;
//   PLUMB_HOLD_AT=<point>:<n> with PLUMB_HOLD_FILE=F   the n-th time <point> is reached, create
//       F.held and wait there while F exists: the test holds the run at a known state (an
//       admin's move between two steps) instead of racing it.
plans::CrashHook CrashHookFromEnv() {
  const char* hooks = std::getenv("PLUMB_TEST_HOOKS");
  if (!hooks || std::string(hooks) != "1") return {};
  struct At {
    std::string point;
    int nth = 1;
  };
  auto parse = [](const char* v) -> std::optional<At> {
    if (!v || !*v) return std::nullopt;
    std::string spec(v);
    auto colon = spec.rfind(':');
    return At{spec.substr(0, colon),
              colon == std::string::npos ? 1 : std::atoi(spec.c_str() + colon + 1)};
  };
  std::optional<At> crash = parse(std::getenv("PLUMB_CRASH_AT"));
  std::optional<At> hold = parse(std::getenv("PLUMB_HOLD_AT"));
  const char* hold_file = std::getenv("PLUMB_HOLD_FILE");
  if (!hold_file || !*hold_file) hold.reset();
  if (!crash && !hold) return {};
  auto crashes = std::make_shared<std::atomic<int>>(0);
  auto holds = std::make_shared<std::atomic<int>>(0);
  const std::string file = hold ? hold_file : "";
  return [crash, hold, file, crashes, holds](const std::string& p) {
    if (hold && p == hold->point && ++*holds == hold->nth) {
      std::fprintf(stderr, "plumb: test hook: holding at %s #%d while %s exists\n", p.c_str(),
                   hold->nth, file.c_str());
      std::fflush(stderr);
      { std::ofstream(file + ".held") << getpid() << "\n"; }
      while (access(file.c_str(), F_OK) == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (crash && p == crash->point && ++*crashes == crash->nth) {
      std::fprintf(stderr, "plumb: test hook: crashing at %s #%d\n", p.c_str(), crash->nth);
      std::fflush(stderr);
      kill(getpid(), SIGKILL);
    }
    return false;
  };
}

// The time the cluster lock is written in: the store's clock (a shared store's server), this
// machine's when the store cannot say.
std::chrono::system_clock::time_point LockNow(plans::Journal& j) {
  auto t = j.StoreNow();
  return t.ok() ? *t : std::chrono::system_clock::now();
}

// The --lock-ttl bounds: long enough that a renewal (every ttl/5) survives a slow store, short
// enough that a lock a dead runner left behind is not a day's outage.
constexpr long kMinLockTtlS = 10, kMaxLockTtlS = 24 * 3600;

// The line a store outage gets on stderr, with what this run does meanwhile and after.
std::string StoreEventLine(const plans::StoreEvent& e, const std::string& run) {
  using K = plans::StoreEvent::Kind;
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
      return fmt::format("plumb apply: the store {} answers again (after {}s)", e.store, e.down_for.count());
  }
  return {};
}

// Plans now (apply --ref, --retry-failed): the very read-only run `plumb plan` makes (the same
// --limit patterns, BMC reads, Slurm's view, repair vs intent from the nodes' markers), so
// what apply does is what plan shows. The repo load it planned from goes to `loaded`: apply
// must carry out the desired state of the very commit it planned (a second load of a branch
// could see a newer commit).
Result<plans::Plan> PlanNow(const GlobalOptions& g, const std::string& limit,
                            const std::string& trust_from,
                            const std::vector<std::string>& only_modules,
                            inventory::LoadedCluster& loaded,
                            std::optional<plans::CommitTrust>& trust) {
  ReadRunArgs read;
  read.limit = limit;
  read.only_modules = only_modules;
  read.check_trust = true;
  read.trust_from = trust_from;
  auto rr = DoReadRun(g, read);
  if (!rr.ok()) return rr.error();
  loaded = std::move((*rr)->loaded);
  trust = std::move((*rr)->trust);
  plans::Plan plan = std::move((*rr)->run.plan);
  plan.diags.Append((*rr)->run.diags);
  plan.diags.Append(loaded.diags);   // warnings only (errors stopped the load): as plan shows
  if (plan.diags.HasErrors()) return plan.diags.items().front();
  plans::SealPlan(plan);
  return plan;
}

bool Confirm() {
  std::printf("\nApply this plan? Only 'y' proceeds [y/N]: ");
  std::fflush(stdout);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

// Shows the plan as `plumb plan` prints it and asks; false when the operator said no (or could
// not be asked).
bool ShowAndConfirm(const GlobalOptions& g, const ApplyArgs& a, const plans::Plan& plan) {
  if (g.format != "json") std::fputs(plans::report::PlanToText(plan).c_str(), stdout);
  if (!plan.HasApplicable() || a.auto_approve) return true;
  if (!isatty(0)) {
    ApplyErr("plumb apply: refusing to apply without confirmation: stdin is not a terminal "
        "(pass --auto-approve once the plan is reviewed)");
    return false;
  }
  if (!Confirm()) {
    ApplyErr("plumb apply: not applied");
    return false;
  }
  return true;
}

// One table from a run's outcome to the exit code (README "Exit codes").
int ExitFor(const plans::RolloutResult& res) {
  using plans::RunState;
  switch (res.outcome) {
    case RunState::kDone: return ExitCodeFor(kApplyVerb, Outcome::kOk);
    case RunState::kInterrupted: return ExitCodeFor(kApplyVerb, Outcome::kInterrupted);
    case RunState::kPaused:
    case RunState::kIncomplete: return ExitCodeFor(kApplyVerb, Outcome::kPaused);
    case RunState::kFailed:    // some node failed, or the journal could not be written
    case RunState::kHalted:
    case RunState::kCrashed:
    case RunState::kRunning: break;
  }
  return ExitCodeFor(kApplyVerb, Outcome::kRunFailed);
}

}  // namespace

int RunApply(const GlobalOptions& g, const ApplyArgs& a) {
  if (auto conflicts = FlagConflicts(a); !conflicts.empty()) {
    for (const std::string& c : conflicts) ApplyErr("plumb apply: error: " + c);
    ApplyErr("hint: plumb apply --help lists what each flag does in each mode");
    return ExitCodeFor(kApplyVerb, Outcome::kError);
  }
  if (g.working_tree)
    return ApplyFail(Diagnostic::Error("apply.working-tree",
                                  "apply never reads uncommitted files; commit them first"));
  const std::optional<long> ttl_s = inventory::ParseDuration(a.lock_ttl);
  if (!ttl_s || *ttl_s < kMinLockTtlS || *ttl_s > kMaxLockTtlS)
    return ApplyFail(Diagnostic::Error(
        "apply.lock-ttl", fmt::format("--lock-ttl {}: not a duration from 10s to 24h", a.lock_ttl), {},
        {}, "like --lock-ttl 10m (the default) or --lock-ttl 90s"));
  const std::chrono::seconds lock_ttl(*ttl_s);
  const std::optional<long> task_s = inventory::ParseDuration(a.task_timeout);
  const std::optional<long> power_s = inventory::ParseDuration(a.power_timeout);
  if (!task_s || *task_s <= 0 || !power_s || *power_s <= 0)
    return ApplyFail(Diagnostic::Error(
        "apply.wait-timeout",
        fmt::format("--task-timeout {} / --power-timeout {}: not a duration", a.task_timeout,
                    a.power_timeout),
        {}, {}, "like --task-timeout 45m (the default) or --power-timeout 90s"));
  auto chosen = plans::ChosenStore(a.journal);
  if (!chosen) return ApplyFail(chosen.error());
  const std::string store = *chosen;
  const std::string journal_path = plans::RedactStore(store);   // what messages show
  auto jr = plans::OpenStore(store);
  if (!jr) return ApplyFail(jr.error());
  plans::Journal& journal = **jr;
  const std::string host = plans::HostName();

  if (!a.force_unlock.empty()) {
    auto released = plans::ForceUnlockChecked(journal, a.force_unlock, a.dead_owner,
                                              Rfc(LockNow(journal)), host);
    if (!released) return ApplyFail(released.error());
    std::printf("released the lock of cluster %s held by run %s (host %s, pid %lld)\n",
                released->cluster.c_str(), a.force_unlock.c_str(), released->owner_host.c_str(),
                static_cast<long long>(released->owner_pid));
    return ExitCodeFor(kApplyVerb, Outcome::kOk);
  }

  // 1. The plan: from the journal (--resume), a file, or made now (--ref, --retry-failed).
  plans::Plan plan;
  std::string run_id;
  std::string run_commit;   // --resume: the commit the journaled run applies
  bool run_in_journal = false;
  if (a.resume) {
    auto c = plans::ChooseRunToResume(journal, a.resume_run, !a.plan_file.empty(), journal_path);
    if (!c) return ApplyFail(c.error());
    run_id = c->run_id;
    if (c->kind == plans::ResumeChoice::Kind::kAlreadyDone) {
      std::printf("run %s is already done\n", run_id.c_str());
      return ExitCodeFor(kApplyVerb, Outcome::kOk);
    }
    if (c->kind == plans::ResumeChoice::Kind::kContinue) {
      run_in_journal = true;
      plan = std::move(c->plan);
      run_commit = c->run_commit;   // the commit the run applies (maybe not the plan's)
    }
  }
  if (!run_in_journal && !a.plan_file.empty()) {
    auto p = ReadPlanFile(a.plan_file);
    if (!p) return ApplyFail(p.error());
    plan = *p;
  }
  const bool plan_now = !a.resume && a.plan_file.empty();
  std::string retry_limit;   // --retry-failed: the failed nodes, as a host list
  GlobalOptions at = g;
  if (!a.retry_failed.empty()) {
    auto rec = journal.GetRun(a.retry_failed);
    if (!rec) return ApplyFail(rec.error());
    Result<std::vector<std::string>> failed = std::vector<std::string>{};
    if (rec->has_value()) {
      failed = plans::FailedNodesInJournal(journal, a.retry_failed);
    } else {
      // Another runner's run: the scheduler still names the nodes it left failed, read
      // through the repo at --ref.
      inventory::LoadedCluster here = LoadRepo(at.repo, at.ref, false);
      if (!here.ok()) {
        ApplyErr(here.diags.ToText());
        return ExitCodeFor(kApplyVerb, Outcome::kError);
      }
      transport::LocalShell local(SchedulerEnv());
      failed = plans::FailedNodesInSchedulers(RealSchedulers(here.cluster, local), a.retry_failed);
      ApplyErr(fmt::format("plumb apply: run {} is not in {}; the scheduler names the node(s) it left "
                      "failed; planning them at {}", a.retry_failed, journal_path, at.ref));
    }
    if (!failed) return ApplyFail(failed.error());
    if (failed->empty()) {
      std::printf("run %s left no node failed: nothing to retry\n", a.retry_failed.c_str());
      return ExitCodeFor(kApplyVerb, Outcome::kOk);
    }
    retry_limit = inventory::CompressHostlist(*failed);
    if (rec->has_value()) {
      if (!a.given.count("--ref")) at.ref = (*rec)->commit;   // the run's own commit
      if (!a.given.count("--repo") && !(*rec)->repo.empty()) at.repo = (*rec)->repo;
    }
    ApplyErr(fmt::format("plumb apply: retrying the node(s) run {} left failed: {}", a.retry_failed,
                    retry_limit));
  }
  if (!plan_now) {
    if (Status s = plans::VerifyPlanDigest(plan); !s) return ApplyFail(s.error());
    if (auto d = plans::CheckPlan(plan); d.HasErrors())
      return FailAll(d, "the plan is not a valid plan:");
  }

  // 2. The cluster repo at the commit to apply (a plan made now brings its own load). The repo
  //    is --repo when given, else the one the plan names: known_hosts and the identity are
  //    resolved against it, whatever the current directory.
  inventory::LoadOptions lo = RepoLoadOptions(
      at.repo != "." || plan.source.repo.empty() ? at.repo : plan.source.repo, at.ref, false);
  if (!plan_now) {
    auto commit = plans::CommitForSavedPlan(
        plan, run_commit, a.given.count("--ref") ? g.ref : std::string(),
        [&](const std::string& ref) { return inventory::ResolveCommit(lo.repo, ref); });
    if (!commit) return ApplyFail(commit.error());
    lo.ref = commit->commit;
    if (!commit->note.empty()) ApplyErr("plumb apply: " + commit->note);
  }
  inventory::LoadedCluster lc;
  std::optional<plans::CommitTrust> trust;
  if (plan_now) {
    // --retry-failed plans its failed nodes; a --limit given too narrows that plan below. The
    // commit is judged by the signing policy before any node is read.
    auto p = PlanNow(at, retry_limit.empty() ? a.limit : retry_limit, a.trust_from,
                     a.only_modules, lc, trust);
    if (!p) return ApplyFail(p.error());
    plan = std::move(p.value());
    lo.repo = at.repo;
  } else {
    lc = inventory::LoadCluster(lo);
  }
  if (!lc.ok()) {
    ApplyErr(lc.diags.ToText());
    return ExitCodeFor(kApplyVerb, Outcome::kError);
  }
  if (!trust) {
    // The commit applied, judged by the signing policy of its trusted base, before any node,
    // scheduler or journal run is touched.
    auto t = CheckTrust(lo.repo, lc.cluster.source.commit, a.trust_from);
    if (!t) return ApplyFail(t.error());
    trust = std::move(t.value());
  }

  // 3. What the engine talks to: each rollout policy's own scheduler, and what they say now
  //    (for the checks below and for --limit's batches).
  transport::LocalShell local(SchedulerEnv());
  plans::Schedulers schedulers = RealSchedulers(lc.cluster, local);
  std::unique_ptr<modules::Drainer> fallback = MakeDrainer(inventory::DrainScheduler::kNone, local);
  const plans::SchedulerView view = plans::ReadSchedulers(schedulers);
  if (!plan_now) {
    if (auto refused = plans::CheckSavedPlan(plan, lc.cluster, lc.desired, view, lc.files.get(),
                                             g.ref))
      return FailAll(refused->diags, refused->headline);
  }
  if (!a.limit.empty() && !a.resume && (!plan_now || !retry_limit.empty())) {
    // A saved plan (or the failed nodes) narrowed: only the plan's nodes that match, batches
    // formed again under the same policies and the scheduler's view now.
    std::vector<std::string> left_out;
    auto narrowed = plans::NarrowPlanToLimit(plan, lc.cluster, lc.desired, view, a.limit, &left_out);
    if (!narrowed) return ApplyFail(narrowed.error());
    plan = std::move(*narrowed);
    if (!left_out.empty())
      ApplyErr(fmt::format("plumb apply: --limit {}: applying {} of the plan's nodes; left out: {}",
                      a.limit, plan.nodes.size(), inventory::CompressHostlist(left_out)));
    if (plan.diags.HasErrors()) return FailAll(plan.diags, "the narrowed plan has errors:");
  }

  // 4. Shown and confirmed (a resumed run was confirmed when it started).
  if (!a.plan_out.empty()) {
    if (Status st = WriteOutput(a.plan_out, plans::SealPlanToFile(plan)); !st.ok())
      return ApplyFail(st.error());
  }
  if (!a.resume) {
    if (!ShowAndConfirm(g, a, plan)) return ExitCodeFor(kApplyVerb, Outcome::kError);
    if (const std::string skipped = plans::report::SkippedUnhealthyNote(plan); !skipped.empty())
      ApplyErr("plumb apply: " + skipped);
    if (!plan.HasApplicable()) {
      if (!plan.complete) {
        std::printf("nothing to apply on the nodes read; %zu node(s) could not be read\n",
                    plan.unreadable.size());
        return ExitCodeFor(kApplyVerb, Outcome::kPartial);
      }
      std::printf(plan.HasChanges() ? "nothing to apply: every node with changes is left as it is "
                                      "(unhealthy)\n"
                                    : "nothing to apply: every node is in sync\n");
      return ExitCodeFor(kApplyVerb, Outcome::kOk);
    }
  }
  if (!plan.complete)
    ApplyErr(fmt::format("plumb apply: warning: the plan is incomplete ({} node(s) were unreadable "
                    "and are left alone)", plan.unreadable.size()));

  // 5. The lock, then the run record. Nothing has been touched so far.
  const auto now = std::chrono::system_clock::now();
  if (run_id.empty()) run_id = plans::NewRunId(now);
  plans::RunStart start;
  const auto lock_taken = std::chrono::steady_clock::now();   // the lock's time counts from here
  const auto lock_now = LockNow(journal);
  start.lock = {plan.cluster, run_id, host, getpid(), Rfc(lock_now),
                Rfc(lock_now + lock_ttl), plans::ProcessStart(getpid())};
  start.in_journal = run_in_journal;
  start.recover_lost = a.resume && !run_in_journal;
  if (!run_in_journal) {
    plans::RunRecord& r = start.record;
    r.id = run_id;
    r.cluster = plan.cluster;
    r.plan_digest = plan.digest;
    r.plan_json = plans::PlanToJson(plan).dump();
    r.commit = lc.cluster.source.commit;   // the commit applied (the markers'), maybe not the plan's
    if (plan.source.commit != r.commit) r.plan_commit = plan.source.commit;
    r.repo = lo.repo;
    r.who = plans::WhoFromEnvironment([](const char* v) { return std::getenv(v); },
                                      plans::UserName(), a.approved_by);
    r.who.author = trust->info.author;
    r.who.committer = trust->info.committer;
    r.who.signer = trust->signer ? trust->signer->ToString() : trust->note;
    r.started_at = Rfc(now);
    r.owner_host = host;
    r.owner_pid = getpid();
  }
  auto started = plans::StartRun(journal, plan, start, schedulers, Rfc(lock_now));
  if (!started) return ApplyFail(started.error());
  for (const std::string& n : started->notes) ApplyErr("plumb apply: " + n);
  // From here on, a store that stops answering is said at once, and what this run does about
  // it (the journal waits out its retry window, then every write fails at once).
  journal.SetStoreObserver([run_id](const plans::StoreEvent& e) { ApplyErr(StoreEventLine(e, run_id)); });
  plans::LockKeeper keeper(journal, start.lock, lock_ttl, lock_taken,
                           {.say = [](const std::string& line) { ApplyErr("plumb apply: " + line); },
                            .stop = &g_stop});

  // 6. Run.
  plans::RolloutOptions opts;
  opts.run_id = run_id;
  opts.commit = lc.cluster.source.commit;
  opts.resume = a.resume && run_in_journal;
  opts.owner_host = host;
  opts.owner_pid = getpid();
  opts.owner_user = plans::UserName();
  opts.cluster = &lc.cluster;
  opts.adopt = started->adopt;
  opts.policies = lc.cluster.rollouts;   // the commit's: what the engine enforces
  for (const auto& [name, nd] : lc.desired) {
    opts.desired[name] = nd.desired;
    opts.scope[nd.rollout].push_back(name);
  }
  opts.timing.reboot_timeout = std::chrono::seconds(a.reboot_timeout_s);
  opts.timing.reboot_grace = std::chrono::seconds(a.reboot_grace_s);
  opts.timing.poll_max = std::chrono::milliseconds(a.poll_max_ms);
  opts.timing.command_timeout = std::chrono::seconds(lc.cluster.ssh.command_timeout_s);
  if (const char* hb = std::getenv("PLUMB_HEARTBEAT_S"); hb && std::atoi(hb) > 0)
    opts.timing.heartbeat = std::chrono::seconds(std::atoi(hb));   // tests: a beat in seconds

  modules::SshOverrides extra;
  if (const char* p = std::getenv("PLUMB_SSH_PASSPHRASE")) extra.identity_passphrase = p;
  // known_hosts and the identity are the repo's the plan loads from, not the current dir's.
  SshShellFactory shells(lc.cluster.ssh, lo.repo, extra);
  std::shared_ptr<BmcFactory> bmcs;
  if (!lc.cluster.bmc.credentials.empty()) {
    BmcConnectOptions co;
    auto rel = [&](const std::string& p) {
      return p.empty() || p[0] == '/' ? p : lo.repo + "/" + p;
    };
    co.tls.ca_file = rel(lc.cluster.bmc.ca);
    co.tls.fingerprint = lc.cluster.bmc.fingerprint;
    co.credentials = lc.cluster.bmc.credentials;
    co.task_timeout = std::chrono::seconds(*task_s);
    co.power_timeout = std::chrono::seconds(*power_s);
    static transport::CancelSignal* cancel = new transport::CancelSignal();   // the handler's
    g_cancel = cancel;
    co.cancel = cancel;
    auto f = BmcFactory::Create(co);
    if (f) bmcs = *f;
    else ApplyErr("plumb apply: note: no BMC power control: " + f.error().message);
  }
  plans::OpenBmc open_bmc;
  if (bmcs) open_bmc = [bmcs](const plans::BmcTarget& t) { return bmcs->Open(t); };
  GatherProber prober(lc.cluster, shells, plans::ModulesToRead(modules::AllModules(), lc.desired),
                      std::chrono::seconds(lc.cluster.ssh.command_timeout_s), open_bmc,
                      &opts.desired);
  RealNodeTransport transport(lc.cluster, shells, bmcs);
  auto leases = plans::MakeShellLeases(transport);
  plans::RealClock clock;
  auto observer = MakeObserver(g.format, g.format != "json" && isatty(1), ColorOn(g.color, stdout));

  plans::RolloutDeps deps;
  deps.journal = &journal;
  deps.drainers = schedulers.by_rollout;
  deps.drainer = schedulers.by_rollout.empty() ? fallback.get()
                                               : schedulers.by_rollout.begin()->second;
  deps.leases = leases.get();
  deps.prober = &prober;
  deps.transport = &transport;
  deps.modules = [](std::string_view n) { return modules::FindModule(n); };
  deps.all_modules = modules::AllModules();
  deps.clock = &clock;
  deps.observer = observer.get();
  deps.stop = &g_stop;
  deps.lock_expiring = [&keeper] { return keeper.Expiring(); };
  deps.crash = CrashHookFromEnv();

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  plans::RolloutResult res = plans::RunRollout(plan, opts, deps);
  for (const auto& d : res.diags.items()) ApplyErr(d.ToString());
  if (g.format != "json")
    std::fputs(plans::report::ApplySummaryText(res, run_id, journal_path).c_str(), stdout);
  return ExitFor(res);
}

void RegisterApply(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* a = new ApplyArgs;   // lives for the whole process, like the App
  CLI::App* sub = app.add_subcommand(
      "apply",
      "Apply a plan rolling-with-drain: per batch, lease and drain each node, change, reboot, "
      "verify, health-check, return to service; journaled and resumable.\n"
      "Exit: 0 done, 1 error/failed/halted (or the journal could not be written), 3 incomplete "
      "(paused by the window or an unreachable scheduler; stale or busy nodes), 130 interrupted.");
  std::vector<CLI::Option*> opts;
  opts.push_back(sub->add_option("plan", a->plan_file,
                                 "Plan file from `plumb plan --out` (digest- and commit-checked)"));
  opts.push_back(sub->add_option("--repo", g.repo, "Cluster repo (a git repository)")
                     ->capture_default_str());
  opts.push_back(sub->add_option("--ref", g.ref,
                                 "Plan at this ref now; with a plan file, apply at the commit the "
                                 "ref names now (the merge of the reviewed plan) if every planned "
                                 "node wants the same there, else refuse naming nodes and keys; "
                                 "with --retry-failed, plan there instead of the run's commit"));
  opts.push_back(sub->add_flag("--working-tree", g.working_tree,
                               "(refused: apply reads committed files only)"));
  opts.push_back(sub->add_flag("--auto-approve", a->auto_approve,
                               "Apply without asking (a plan made now, a plan file, a retry)"));
  auto* res = sub->add_option("--resume", a->resume_run,
                              "Continue an interrupted run (the latest unfinished one if no RUN)")
                  ->expected(0, 1);
  opts.push_back(res);
  opts.push_back(sub->add_option("--retry-failed", a->retry_failed,
                                 "Plan and apply again the nodes RUN left failed (drained); they "
                                 "return to service once they converge"));
  opts.push_back(sub->add_option("--store,--journal", a->journal,
                                 "Where runs, the cluster lock and the history are kept: a SQLite file, or a "
                                 "postgresql:// URL shared by every machine, without a password: one here would "
                                 "show in ps for the whole run, and is refused; it goes in $PLUMB_STORE or "
                                 "~/.pgpass (default: $PLUMB_STORE, $PLUMB_JOURNAL, "
                                 "$XDG_STATE_HOME/plumb/journal.db, ~/.local/state/plumb/journal.db)"));
  opts.push_back(sub->add_option("--force-unlock", a->force_unlock,
                                 "Release the cluster lock RUN holds, once its process is gone"));
  opts.push_back(sub->add_option("--dead-owner", a->dead_owner,
                                 "With --force-unlock of a run on another host: HOST:PID of its "
                                 "owner, to confirm that process is dead"));
  opts.push_back(sub->add_option("--limit", a->limit,
                                 "Only these nodes (n[1-3,5], gpu*, @h100, !gpu003): of a plan "
                                 "made now, of a plan file (its batches formed again), or of a "
                                 "--retry-failed"));
  {
    std::string* tf = &a->trust_from;
    sub->add_option("--trust-policy-from", *tf,
                    "Judge the commit by the signing policy (policy.yaml) at this ref (default: "
                    "the commit's first parent; never the commit itself)");
    opts.push_back(sub->get_option("--trust-policy-from"));
  }
  opts.push_back(sub->add_option("--approved-by", a->approved_by,
                                 "Who approved this change, for the run record (default: "
                                 "$PLUMB_APPROVED_BY, which the CI recipes set)"));
  opts.push_back(sub->add_option("--plan-out", a->plan_out,
                                 "Also write the plan being applied here (after --limit)"));
  opts.push_back(sub->add_option("--reboot-timeout", a->reboot_timeout_s,
                                 "Seconds a reboot may take")->capture_default_str());
  opts.push_back(sub->add_option("--task-timeout", a->task_timeout,
                                 "How long a firmware update's task may run on a BMC before the "
                                 "node fails (45m, 90s, 1h)")->capture_default_str());
  opts.push_back(sub->add_option("--power-timeout", a->power_timeout,
                                 "How long a BMC reset may take to reach its power state")
                     ->capture_default_str());
  opts.push_back(sub->add_option("--reboot-grace", a->reboot_grace_s,
                                 "On resume: seconds an unconfirmed reboot may still be on its way")
                     ->capture_default_str());
  opts.push_back(sub->add_option("--poll-max-ms", a->poll_max_ms,
                                 "Longest wait between scheduler/boot polls")->capture_default_str());
  opts.push_back(sub->add_option("--lock-ttl", a->lock_ttl,
                                 "How long the cluster lock lasts unless renewed (every ttl/5 while "
                                 "the run lives): another machine may take over a run whose "
                                 "holder went silent this long ago (10s to 24h)")
                     ->capture_default_str());
  opts.push_back(sub->add_option("--format", g.format, "text | json (JSON lines of events)")
                     ->check(CLI::IsMember({"text", "json"})));
  sub->footer(
      "Examples:\n"
      "  plumb apply plan.json                      apply a reviewed plan (shown, then y/N)\n"
      "  plumb apply plan.json --auto-approve       the same from a pipeline\n"
      "  plumb apply plan.json --ref main --auto-approve --trust-policy-from $BEFORE\n"
      "                                             after the merge: the reviewed plan at main's\n"
      "                                             commit, if main wants the same of its nodes\n"
      "  plumb apply plan.json --limit 'n[1-3,5]'   only those nodes of the plan\n"
      "  plumb apply --ref main                     plan now, show it, ask\n"
      "  plumb apply --resume                       continue the last unfinished run\n"
      "  plumb apply --retry-failed RUN             retry the nodes RUN left failed\n"
      "  plumb apply --force-unlock RUN             release a dead run's lock");
  sub->callback([&g, a, res, opts, &run] {
    a->resume = res->count() > 0;
    for (CLI::Option* o : opts)
      if (o->count() > 0) a->given.insert(o->get_name());
    run = [&g, a] { return RunApply(g, *a); };
  });
}

}  // namespace plumb::cmd
