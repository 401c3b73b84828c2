// plumb apply: carry out a plan rolling-with-drain (plans/rollout), journaled, resumable.
//   plumb apply PLAN.json                 a saved plan (digest checked; --ref, if given, must
//                                         still resolve to the plan's commit)
//   plumb apply --ref REF [--auto-approve]  plan now, show it, ask y/N (a TTY is required
//                                         unless --auto-approve)
//   plumb apply --resume [RUN] [PLAN.json]  continue a run from the journal (+ Slurm's drain
//                                         reasons naming the run, + node markers)
//   plumb apply --force-unlock RUN        drop the cluster lock a dead run left behind
// Exit: 0 done, 1 error/failed/halted, 3 incomplete (paused outside the window, stale nodes),
// 130 interrupted.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "cmd/apply_deps.h"
#include "cmd/command.h"
#include "cmd/read_run.h"
#include "cmd/subcommands.h"
#include "inventory/load.h"
#include "modules/registry.h"
#include "modules/transport/local_shell.h"
#include "plans/clock.h"
#include "plans/gather.h"
#include "plans/journal.h"
#include "plans/plan_json.h"
#include "plans/planner.h"
#include "plans/rollout.h"
#include "plans/ssh_factory.h"

namespace plumb::cmd {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signals{0};

extern "C" void OnSignal(int) {
  // First Ctrl-C: finish or abandon in-flight steps, journal, exit 130. Second: leave now (the
  // journal already holds every intent; --resume re-checks).
  if (g_signals.fetch_add(1) >= 1) _exit(kExitInterrupted);
  g_stop = true;
}

struct ApplyArgs {
  std::string plan_file;
  bool ref_given = false;
  bool auto_approve = false;
  bool resume = false;
  std::string resume_run;
  std::string journal;
  std::string force_unlock;
  std::string limit;
  int reboot_timeout_s = 900;
  int poll_max_ms = 5000;
  int reboot_grace_s = 60;
  std::string plan_out;
};

void Err(const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); }

int Fail(const Diagnostic& d) {
  Err("plumb apply: " + d.ToString());
  return kExitError;
}

// Whether a process of this host still runs (EPERM: it does, as another user). A reused pid
// reads as alive: the safe side (the user can still --force-unlock).
bool ProcessAlive(int64_t pid) {
  if (pid <= 0) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::string Hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
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

// The crash hook of the integration tests: PLUMB_CRASH_AT=<point>:<n> kills plumb -9 at the
// n-th time <point> ("apply.intent", "reboot.outcome"...) is reached. Honoured only with
// PLUMB_TEST_HOOKS=1, so a stray variable in production does nothing.
plans::CrashHook CrashHookFromEnv() {
  const char* hooks = std::getenv("PLUMB_TEST_HOOKS");
  const char* at = std::getenv("PLUMB_CRASH_AT");
  if (!hooks || std::string(hooks) != "1" || !at || !*at) return {};
  std::string spec(at);
  auto colon = spec.rfind(':');
  std::string point = spec.substr(0, colon);
  int nth = colon == std::string::npos ? 1 : std::atoi(spec.c_str() + colon + 1);
  auto count = std::make_shared<std::atomic<int>>(0);
  return [point, nth, count](const std::string& p) {
    if (p == point && ++*count == nth) {
      std::fprintf(stderr, "plumb: test hook: crashing at %s #%d\n", p.c_str(), nth);
      std::fflush(stderr);
      kill(getpid(), SIGKILL);
    }
    return false;
  };
}

// Keeps the lock fresh while the run lasts (expiry 10 minutes, renewed every minute).
class LockKeeper {
 public:
  LockKeeper(plans::Journal& j, std::string cluster, std::string run)
      : j_(j), cluster_(std::move(cluster)), run_(std::move(run)) {
    t_ = std::thread([this] {
      std::unique_lock lk(mu_);
      while (!cv_.wait_for(lk, std::chrono::seconds(60), [this] { return done_; })) {
        auto exp = Rfc(std::chrono::system_clock::now() + std::chrono::minutes(10));
        if (Status s = j_.RenewLock(cluster_, run_, exp); !s) {
          // Another run may hold the cluster now: start nothing more, finish what runs.
          Err("plumb apply: lost the cluster lock (" + s.error().message +
              "); stopping: no new node starts, the nodes in progress finish");
          g_stop = true;
        }
      }
    });
  }
  ~LockKeeper() {
    {
      std::lock_guard lk(mu_);
      done_ = true;
    }
    cv_.notify_all();
    t_.join();
    (void)j_.ReleaseLock(cluster_, run_);
  }

 private:
  plans::Journal& j_;
  std::string cluster_, run_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread t_;
};

// Plans now from the repo at --ref (used by `apply --ref`): the very read-only run `plumb
// plan` makes (the same --limit patterns, BMC reads, Slurm's view, repair vs intent from the
// nodes' markers), so what apply does equals what plan shows.
// The repo load it planned from goes to `loaded`: apply must carry out the desired state of the
// very commit it planned (a second load of a branch could see a newer commit).
Result<plans::Plan> PlanNow(const GlobalOptions& g, const std::string& limit,
                            inventory::LoadedCluster& loaded) {
  ReadRunArgs read;
  read.limit = limit;
  auto rr = DoReadRun(g, read);
  if (!rr.ok()) return rr.error();
  loaded = std::move((*rr)->loaded);
  plans::Plan plan = std::move((*rr)->run.plan);
  plan.diags.Append((*rr)->run.diags);
  if (plan.diags.HasErrors()) return plan.diags.items().front();
  for (const Diagnostic& d : plan.diags.items())
    if (d.severity == Severity::kWarning) Err("plumb apply: warning: " + d.ToString());
  plans::SealPlan(plan);
  return plan;
}

void PrintPlanSummary(const plans::Plan& plan) {
  std::printf("plan for %s at %s: %zu node(s) to change, %zu in sync, %zu unreadable\n",
              plan.cluster.c_str(), plan.source.commit.substr(0, 12).c_str(), plan.nodes.size(),
              plan.in_sync.size(), plan.unreadable.size());
  for (const auto& n : plan.nodes) {
    std::printf("  %s (%s):\n", n.node.c_str(), modules::DisruptionName(n.disruption));
    for (const auto& a : n.actions) std::printf("    ~ %s\n", a.action.summary.c_str());
  }
  for (const auto& b : plan.batches)
    std::printf("  batch %d%s: %s\n", b.index + 1, b.canary ? " (canary)" : "",
                fmt::format("{}", fmt::join(b.nodes, " ")).c_str());
  for (const auto& u : plan.unreadable)
    std::printf("  ! %s unreadable: %s\n", u.node.c_str(), u.reason.c_str());
}

bool Confirm() {
  std::printf("Apply this plan? Only 'y' proceeds [y/N]: ");
  std::fflush(stdout);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

int RunApply(const GlobalOptions& g, const ApplyArgs& a) {
  const std::string journal_path = a.journal.empty() ? plans::DefaultJournalPath() : a.journal;
  auto jr = plans::OpenSqliteJournal(journal_path);
  if (!jr) return Fail(jr.error());
  plans::Journal& journal = **jr;

  if (!a.force_unlock.empty()) {
    if (Status s = journal.ForceUnlock(a.force_unlock); !s) return Fail(s.error());
    std::printf("released the lock held by run %s\n", a.force_unlock.c_str());
    return kExitOk;
  }

  // 1. The plan: from the journal (--resume), a file, or made now (--ref).
  plans::Plan plan;
  std::string run_id;
  bool resume = a.resume;
  bool run_in_journal = false;
  if (resume) {
    run_id = a.resume_run;
    if (run_id.empty()) {
      auto runs = journal.ListRuns(50);
      if (!runs) return Fail(runs.error());
      for (const auto& r : *runs)
        if (r.outcome != "done" && r.outcome != "failed") {
          run_id = r.id;
          break;
        }
      if (run_id.empty()) {
        Err("plumb apply: nothing to resume: every run in " + journal_path + " has finished");
        return kExitError;
      }
    }
    auto rec = journal.GetRun(run_id);
    if (!rec) return Fail(rec.error());
    if (rec->has_value()) {
      run_in_journal = true;
      auto j = nlohmann::json::parse((*rec)->plan_json, nullptr, false);
      auto p = plans::PlanFromJson(j);
      if (!p) return Fail(p.error());
      plan = *p;
      if ((*rec)->outcome == "done") {
        std::printf("run %s is already done\n", run_id.c_str());
        return kExitOk;
      }
    } else if (a.plan_file.empty()) {
      Err(fmt::format("plumb apply: run {} is not in {}; give its plan file too "
                      "(plumb apply --resume {} PLAN.json) so plumb can finish the nodes Slurm "
                      "shows drained by it", run_id, journal_path, run_id));
      return kExitError;
    }
  }
  if (!run_in_journal && !a.plan_file.empty()) {
    auto p = ReadPlanFile(a.plan_file);
    if (!p) return Fail(p.error());
    plan = *p;
  }
  const bool plan_from_ref = !resume && a.plan_file.empty();
  if (!plan_from_ref) {
    if (Status s = plans::VerifyPlanDigest(plan); !s) return Fail(s.error());
  }

  // 2. The cluster repo at the plan's commit (a fresh plan from --ref brings its own load).
  inventory::LoadOptions lo;
  lo.repo = g.repo != "." || plan.source.repo.empty() ? g.repo : plan.source.repo;
  if (!plan_from_ref) {
    if (a.ref_given) {
      auto c = inventory::ResolveCommit(lo.repo, g.ref);
      if (!c) return Fail(c.error());
      if (*c != plan.source.commit)
        return Fail(Diagnostic::Error(
            "apply.commit-moved",
            fmt::format("the plan was made at {} but {} now resolves to {}", plan.source.commit,
                        g.ref, *c),
            {}, {}, "make a new plan at the new commit"));
    }
    lo.ref = plan.source.commit;
  }
  if (g.working_tree)
    return Fail(Diagnostic::Error("apply.working-tree",
                                  "apply never reads uncommitted files; commit them first"));
  inventory::LoadedCluster lc;
  if (plan_from_ref) {
    // Plan now (reads the nodes; changes nothing), from the same load the run then uses.
    auto p = PlanNow(g, a.limit, lc);
    if (!p) return Fail(p.error());
    plan = std::move(p.value());
  } else {
    lc = inventory::LoadCluster(lo);
  }
  if (!lc.ok()) {
    Err(lc.diags.ToText());
    return kExitError;
  }
  for (const auto& d : lc.diags.items())
    if (d.severity == Severity::kWarning) Err(d.ToString());

  // 3. What the engine talks to.
  std::map<std::string, std::string> env;
  if (const char* sc = std::getenv("SLURM_CONF")) env["SLURM_CONF"] = sc;
  transport::LocalShell local(env);
  inventory::DrainScheduler scheduler = inventory::DrainScheduler::kSlurm;
  if (!lc.cluster.rollouts.empty()) scheduler = lc.cluster.rollouts.begin()->second.scheduler;
  for (const auto& [name, p] : plan.rollouts) scheduler = p.scheduler;
  std::unique_ptr<modules::Drainer> drainer = MakeDrainer(scheduler, local);
  plans::SshOverrides extra;
  if (const char* p = std::getenv("PLUMB_SSH_PASSPHRASE")) extra.identity_passphrase = p;
  plans::SshShellFactory shells(lc.cluster.ssh, g.repo, extra);
  // The modules gather probes with (it skips those without an in-band probe): the same set
  // the plan's facts digests were computed over.
  const std::vector<const modules::Module*>& probe_modules = modules::AllModules();

  if (plan_from_ref) {
    if (!a.plan_out.empty()) {
      if (Status st = WriteOutput(a.plan_out, plans::PlanToJson(plan).dump(2) + "\n"); !st.ok())
        return Fail(st.error());
    }
    if (g.format != "json") PrintPlanSummary(plan);
    if (!plan.HasChanges()) {
      if (!plan.complete) {
        std::printf("nothing to apply on the nodes read; %zu node(s) could not be read\n",
                    plan.unreadable.size());
        return kExitPartial;
      }
      std::printf("nothing to apply: every node is in sync\n");
      return kExitOk;
    }
    if (!a.auto_approve) {
      if (!isatty(0)) {
        Err("plumb apply: refusing to apply without confirmation: stdin is not a terminal "
            "(pass --auto-approve, or apply a reviewed plan file)");
        return kExitError;
      }
      if (!Confirm()) {
        Err("plumb apply: not applied");
        return kExitError;
      }
    }
  }
  if (!plan.complete)
    Err(fmt::format("plumb apply: warning: the plan is incomplete ({} node(s) were unreadable "
                    "and are left alone)", plan.unreadable.size()));

  // 4. The lock, then the run record. Nothing has been touched so far.
  const auto now = std::chrono::system_clock::now();
  if (run_id.empty()) run_id = plans::NewRunId(now);
  plans::LockInfo want{plan.cluster, run_id, Hostname(), getpid(), Rfc(now),
                       Rfc(now + std::chrono::minutes(10))};
  plans::LockInfo held;
  auto got = journal.AcquireLock(want, Rfc(now), &held);
  if (got && !*got && held.run == run_id && held.owner_host == Hostname() &&
      !ProcessAlive(held.owner_pid)) {
    // This run's previous process died (a crash, kill -9) holding the lock: --resume takes over.
    Err(fmt::format("plumb apply: run {}'s previous process (pid {}) is gone; taking over its lock",
                    run_id, held.owner_pid));
    if (Status s = journal.ForceUnlock(held.run); !s) return Fail(s.error());
    got = journal.AcquireLock(want, Rfc(now), &held);
  }
  if (!got) return Fail(got.error());
  if (!*got)
    return Fail(Diagnostic::Error(
        "apply.locked",
        fmt::format("cluster {} is locked by run {} (host {}, pid {}) since {}, until {}",
                    held.cluster, held.run, held.owner_host, held.owner_pid, held.since,
                    held.expires),
        {}, {},
        fmt::format("wait for it, or if that run is dead: plumb apply --force-unlock {}",
                    held.run)));
  LockKeeper keeper(journal, plan.cluster, run_id);
  std::vector<std::string> adopt;
  if (run_in_journal) {
    if (Status s = journal.ReopenRun(run_id, Hostname(), getpid()); !s) return Fail(s.error());
  } else {
    plans::RunRecord r;
    r.id = run_id;
    r.cluster = plan.cluster;
    r.plan_digest = plan.digest;
    r.plan_json = plans::PlanToJson(plan).dump();
    r.commit = plan.source.commit;
    r.repo = lo.repo;
    r.started_at = Rfc(now);
    r.owner_host = Hostname();
    r.owner_pid = getpid();
    if (Status s = journal.BeginRun(r); !s) return Fail(s.error());
    if (resume) {
      // A lost journal: the scheduler still says which nodes this run had drained.
      auto q = drainer->Query({});
      const std::string failed_prefix = "plumb:" + run_id + ":failed:";
      int failed_before = 0;
      if (q)
        for (const auto& [name, n] : *q) {
          if (!n.drain || plans::RunOfReason(n.reason) != run_id || !plan.FindNode(name))
            continue;
          if (n.reason.rfind(failed_prefix, 0) == 0) {
            // It failed in the lost attempt: it stays failed and drained (and counts against
            // max_failures), rather than being retried as if nothing had happened.
            plans::NodeRecord rec;
            rec.run = run_id;
            rec.node = name;
            rec.status = "failed";
            rec.last_step = "journal-lost";
            rec.error = "failed before the journal was lost: " + n.reason;
            rec.ended_at = Rfc(now);
            if (Status s = journal.PutNode(rec); !s) return Fail(s.error());
            ++failed_before;
            continue;
          }
          adopt.push_back(name);
        }
      Err(fmt::format("plumb apply: run {} was not in the journal; adopting {} node(s) its "
                      "drain reason names{}", run_id, adopt.size(),
                      failed_before ? fmt::format(" ({} more failed before: left as they are)",
                                                  failed_before)
                                    : std::string()));
    }
  }

  // 5. Run.
  plans::RolloutOptions opts;
  opts.run_id = run_id;
  opts.resume = resume && run_in_journal;
  opts.owner_host = Hostname();
  opts.owner_pid = getpid();
  opts.cluster = &lc.cluster;
  opts.adopt = adopt;
  for (const auto& [name, nd] : lc.desired) {
    opts.desired[name] = nd.desired;
    opts.scope[nd.rollout].push_back(name);
  }
  opts.timing.reboot_timeout = std::chrono::seconds(a.reboot_timeout_s);
  opts.timing.reboot_grace = std::chrono::seconds(a.reboot_grace_s);
  opts.timing.poll_max = std::chrono::milliseconds(a.poll_max_ms);
  opts.timing.command_timeout = std::chrono::seconds(lc.cluster.ssh.command_timeout_s);

  GatherProber prober(lc.cluster, shells, probe_modules,
                      std::chrono::seconds(lc.cluster.ssh.command_timeout_s));
  std::shared_ptr<plans::BmcFactory> bmcs;
  if (!lc.cluster.bmc.credentials.empty()) {
    plans::BmcConnectOptions co;
    auto rel = [&](const std::string& p) {
      return p.empty() || p[0] == '/' ? p : lo.repo + "/" + p;
    };
    co.tls.ca_file = rel(lc.cluster.bmc.ca);
    co.tls.fingerprint = lc.cluster.bmc.fingerprint;
    co.credentials = lc.cluster.bmc.credentials;
    auto f = plans::BmcFactory::Create(co);
    if (f) bmcs = *f;
    else Err("plumb apply: note: no BMC power control: " + f.error().message);
  }
  RealNodeTransport transport(lc.cluster, shells, bmcs);
  plans::RealClock clock;
  auto observer = MakeObserver(g.format, g.format != "json" && isatty(1));

  plans::RolloutDeps deps;
  deps.journal = &journal;
  deps.drainer = drainer.get();
  deps.prober = &prober;
  deps.transport = &transport;
  deps.modules = [](std::string_view n) { return modules::FindModule(n); };
  deps.clock = &clock;
  deps.observer = observer.get();
  deps.stop = &g_stop;
  deps.crash = CrashHookFromEnv();

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  plans::RolloutResult res = plans::RunRollout(plan, opts, deps);
  for (const auto& d : res.diags.items()) Err(d.ToString());
  if (g.format != "json") {
    for (const auto& n : res.nodes)
      if (n.status == "failed")
        std::printf("FAILED %s at %s: %s%s\n", n.node.c_str(), n.step.c_str(), n.error.c_str(),
                    n.left_drained ? " (left drained)" : "");
    if (!res.halt_reason.empty()) std::printf("%s: %s\n", res.outcome.c_str(), res.halt_reason.c_str());
    if (res.outcome == "paused")
      std::printf("paused outside the maintenance window; next opens %s: plumb apply --resume %s\n",
                  res.next_window.c_str(), run_id.c_str());
    if (res.outcome == "interrupted" || res.outcome == "halted")
      std::printf("continue with: plumb apply --resume %s\n", run_id.c_str());
  }
  if (res.outcome == "done") return kExitOk;
  if (res.outcome == "interrupted") return kExitInterrupted;
  if (res.outcome == "paused" || res.outcome == "incomplete") return kExitPartial;
  return kExitError;
}

}  // namespace

void RegisterApply(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* a = new ApplyArgs;   // lives for the whole process, like the App
  CLI::App* sub = app.add_subcommand(
      "apply",
      "Apply a plan rolling-with-drain: per batch, drain, change, reboot, verify, health-check, "
      "return to service; journaled and resumable.\n"
      "Exit: 0 done, 1 error/failed/halted, 3 incomplete (paused, stale nodes), 130 interrupted.");
  sub->add_option("plan", a->plan_file, "Plan file from `plumb plan --out` (digest-checked)");
  sub->add_option("--repo", g.repo, "Cluster repo (a git repository)")->capture_default_str();
  sub->add_option("--ref", g.ref, "Plan at this ref now; with a plan file, refuse if it moved")
      ->each([a](const std::string&) { a->ref_given = true; });
  sub->add_flag("--working-tree", g.working_tree, "(refused: apply reads committed files only)");
  sub->add_flag("--auto-approve", a->auto_approve, "Apply a plan made with --ref without asking");
  auto* res = sub->add_option("--resume", a->resume_run,
                              "Continue an interrupted run (the latest unfinished one if no RUN)")
                  ->expected(0, 1);
  sub->add_option("--journal", a->journal,
                  "Journal database (default: $PLUMB_JOURNAL, $XDG_STATE_HOME/plumb/journal.db, "
                  "~/.local/state/plumb/journal.db)");
  sub->add_option("--force-unlock", a->force_unlock, "Release the cluster lock RUN holds");
  sub->add_option("--limit", a->limit,
                  "With --ref: only these nodes, as for plan (gpu00[1-4],@h100,!gpu003)");
  sub->add_option("--plan-out", a->plan_out, "With --ref: also write the plan made now here");
  sub->add_option("--reboot-timeout", a->reboot_timeout_s, "Seconds a reboot may take")
      ->capture_default_str();
  sub->add_option("--reboot-grace", a->reboot_grace_s,
                  "On resume: seconds an unconfirmed reboot may still be on its way")
      ->capture_default_str();
  sub->add_option("--poll-max-ms", a->poll_max_ms, "Longest wait between scheduler/boot polls")
      ->capture_default_str();
  sub->add_option("--format", g.format, "text | json (JSON lines of events)")
      ->check(CLI::IsMember({"text", "json"}));
  sub->callback([&g, a, res, &run] {
    a->resume = res->count() > 0;
    run = [&g, a] { return RunApply(g, *a); };
  });
}

}  // namespace plumb::cmd
