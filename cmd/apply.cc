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
// This file holds the flags, the prompt, the signals, the real transports and the outcome ->
// exit code table; the session (plan, lock, run record, run) is plans/session/apply_session.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
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
#include "inventory/load.h"
#include "inventory/version.h"
#include "modules/registry.h"
#include "modules/transport/cancel_signal.h"
#include "modules/transport/local_shell.h"
#include "plans/core/clock.h"
#include "plans/core/process_identity.h"
#include "plans/observe/gather.h"
#include "plans/plan/plan_json.h"
#include "plans/rollout/gather_prober.h"
#include "plans/rollout/node_lease.h"
#include "plans/rollout/rollout.h"
#include "plans/session/apply_session.h"
#include "plans/store/run_who.h"
#include "plans/store/store.h"

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

void InstallApplySignals() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

void ApplyErr(const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); }

int ApplyFail(const Diagnostic& d) {
  ApplyErr("plumb apply: " + d.ToString());
  return ExitCodeFor(kApplyVerb, Outcome::kError);
}

// The test hooks of the integration tests, honoured only with PLUMB_TEST_HOOKS=1 (a stray
// variable in production does nothing), at each point the engine names ("apply.intent",
// "reboot.outcome"...):
//   PLUMB_CRASH_AT=<point>:<n>   kill plumb -9 the n-th time <point> is reached;
//   PLUMB_HOLD_AT=<point>:<n> with PLUMB_HOLD_FILE=F   the n-th time <point> is reached, create
//       F.held and wait there while F exists: the test holds the run at a known state (an
//       admin's move between two steps) instead of racing it.
struct HookAt {
  std::string point;
  int nth = 1;
};

std::optional<HookAt> HookFromEnv(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  std::string spec(v);
  auto colon = spec.rfind(':');
  return HookAt{spec.substr(0, colon),
                colon == std::string::npos ? 1 : std::atoi(spec.c_str() + colon + 1)};
}

void HoldWhileFileExists(const std::string& point, int nth, const std::string& file) {
  std::fprintf(stderr, "plumb: test hook: holding at %s #%d while %s exists\n", point.c_str(), nth,
               file.c_str());
  std::fflush(stderr);
  { std::ofstream(file + ".held") << getpid() << "\n"; }
  while (access(file.c_str(), F_OK) == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

plans::CrashHook CrashHookFromEnv() {
  const char* hooks = std::getenv("PLUMB_TEST_HOOKS");
  if (!hooks || std::string(hooks) != "1") return {};
  std::optional<HookAt> crash = HookFromEnv("PLUMB_CRASH_AT");
  std::optional<HookAt> hold = HookFromEnv("PLUMB_HOLD_AT");
  const char* hold_file = std::getenv("PLUMB_HOLD_FILE");
  if (!hold_file || !*hold_file) hold.reset();
  if (!crash && !hold) return {};
  auto crashes = std::make_shared<std::atomic<int>>(0);
  auto holds = std::make_shared<std::atomic<int>>(0);
  const std::string file = hold ? hold_file : "";
  return [crash, hold, file, crashes, holds](const std::string& p) {
    if (hold && p == hold->point && ++*holds == hold->nth) HoldWhileFileExists(p, hold->nth, file);
    if (crash && p == crash->point && ++*crashes == crash->nth) {
      std::fprintf(stderr, "plumb: test hook: crashing at %s #%d\n", p.c_str(), crash->nth);
      std::fflush(stderr);
      kill(getpid(), SIGKILL);
    }
    return false;
  };
}

// The --lock-ttl bounds: long enough that a renewal (every ttl/5) survives a slow store, short
// enough that a lock a dead runner left behind is not a day's outage.
constexpr long kMinLockTtlS = 10, kMaxLockTtlS = 24 * 3600;

// The session's outside world, the real one: files, the repo, plumb plan's read run, ssh-keygen
// and gpg, the schedulers on this host, the terminal, SSH and Redfish.
class RealApplyWorld final : public plans::ApplyWorld {
 public:
  RealApplyWorld(const GlobalOptions& g, const ApplyArgs& a, std::chrono::seconds task,
                 std::chrono::seconds power)
      : g_(g), a_(a), task_(task), power_(power), local_(SchedulerEnv()) {}

  Result<plans::Plan> ReadPlanFile(const std::string& path) override {
    std::ifstream f(path);
    if (!f) return Diagnostic::Error("apply.plan", "cannot read plan file " + path);
    std::stringstream ss;
    ss << f.rdbuf();
    auto j = nlohmann::json::parse(ss.str(), nullptr, false);
    if (j.is_discarded()) return Diagnostic::Error("apply.plan", path + " is not JSON");
    return plans::PlanFromJson(j);
  }
  Result<plans::PlannedNow> PlanNow(const std::string& repo, const std::string& ref,
                                    const std::string& limit) override;
  inventory::LoadedCluster Load(const std::string& repo, const std::string& ref) override {
    return LoadRepo(repo, ref, false);
  }
  Result<std::string> ResolveCommit(const std::string& repo, const std::string& ref) override {
    return inventory::ResolveCommit(repo, ref);
  }
  Result<plans::CommitTrust> CheckTrust(const std::string& repo, const std::string& commit,
                                        const std::string& trust_from) override {
    return cmd::CheckTrust(repo, commit, trust_from);
  }
  plans::Schedulers SchedulersOf(const inventory::Cluster& cluster) override {
    return RealSchedulers(cluster, local_);
  }
  std::unique_ptr<modules::Drainer> NoScheduler() override {
    return MakeDrainer(inventory::DrainScheduler::kNone, local_);
  }
  plans::Answer Ask() override;
  Status Write(const std::string& path, const std::string& text) override {
    return WriteOutput(path, text);
  }
  void Err(const std::string& line) override { ApplyErr(line); }
  void Out(const std::string& text) override { std::fputs(text.c_str(), stdout); }
  std::chrono::system_clock::time_point Now() override { return std::chrono::system_clock::now(); }
  plans::RolloutResult Run(const plans::Plan& plan, const plans::RolloutOptions& opts,
                           plans::RolloutDeps& deps, const inventory::LoadedCluster& loaded,
                           const std::string& repo) override;

 private:
  std::shared_ptr<BmcFactory> Bmcs(const inventory::Cluster& cluster, const std::string& repo);

  const GlobalOptions& g_;
  const ApplyArgs& a_;
  const std::chrono::seconds task_, power_;
  transport::LocalShell local_;   // Slurm's and kubectl's commands run on this host
};

// Plans now (apply --ref, --retry-failed): the very read-only run `plumb plan` makes (the same
// --limit patterns, BMC reads, Slurm's view, repair vs intent from the nodes' markers), so
// what apply does is what plan shows. The repo load it planned from comes along: apply must
// carry out the desired state of the very commit it planned (a second load of a branch could
// see a newer commit).
Result<plans::PlannedNow> RealApplyWorld::PlanNow(const std::string& repo, const std::string& ref,
                                                  const std::string& limit) {
  GlobalOptions at = g_;
  at.repo = repo;
  at.ref = ref;
  ReadRunArgs read;
  read.limit = limit;
  read.only_modules = a_.only_modules;
  read.check_trust = true;
  read.trust_from = a_.trust_from;
  auto rr = DoReadRun(at, read);
  if (!rr.ok()) return rr.error();
  plans::PlannedNow out;
  out.loaded = std::move((*rr)->loaded);
  out.trust = std::move((*rr)->trust);
  out.plan = std::move((*rr)->run.plan);
  out.plan.diags.Append((*rr)->run.diags);
  out.plan.diags.Append(out.loaded.diags);   // warnings only (errors stopped the load): as plan shows
  if (out.plan.diags.HasErrors()) return out.plan.diags.items().front();
  plans::SealPlan(out.plan);
  return out;
}

plans::Answer RealApplyWorld::Ask() {
  if (!isatty(0)) return plans::Answer::kNoTerminal;
  std::printf("\nApply this plan? Only 'y' proceeds [y/N]: ");
  std::fflush(stdout);
  std::string answer;
  if (!std::getline(std::cin, answer)) return plans::Answer::kNo;
  return answer == "y" || answer == "Y" || answer == "yes" ? plans::Answer::kYes
                                                           : plans::Answer::kNo;
}

// BMC power control and firmware through Redfish, when the inventory names credentials.
std::shared_ptr<BmcFactory> RealApplyWorld::Bmcs(const inventory::Cluster& cluster,
                                                 const std::string& repo) {
  if (cluster.bmc.credentials.empty()) return nullptr;
  BmcConnectOptions co;
  co.tls.ca_file = RepoPath(repo, cluster.bmc.ca);
  co.tls.fingerprint = cluster.bmc.fingerprint;
  co.credentials = cluster.bmc.credentials;
  co.task_timeout = task_;
  co.power_timeout = power_;
  static transport::CancelSignal* cancel = new transport::CancelSignal();   // the handler's
  g_cancel = cancel;
  co.cancel = cancel;
  auto f = BmcFactory::Create(co);
  if (f) return *f;
  ApplyErr("plumb apply: note: no BMC power control: " + f.error().message);
  return nullptr;
}

plans::RolloutResult RealApplyWorld::Run(const plans::Plan& plan,
                                         const plans::RolloutOptions& opts,
                                         plans::RolloutDeps& deps,
                                         const inventory::LoadedCluster& loaded,
                                         const std::string& repo) {
  const inventory::Cluster& cluster = loaded.cluster;
  // known_hosts and the identity are the repo's the plan loads from, not the current dir's.
  std::unique_ptr<SshShellFactory> node_shells = MakeNodeShells(cluster.ssh, repo, false);
  SshShellFactory& shells = *node_shells;
  std::shared_ptr<BmcFactory> bmcs = Bmcs(cluster, repo);
  plans::OpenBmc open_bmc;
  if (bmcs) open_bmc = [bmcs](const plans::BmcTarget& t) { return bmcs->Open(t); };
  plans::GatherProber prober(cluster, shells, plans::ModulesToRead(modules::AllModules(), loaded.desired),
                             std::chrono::seconds(cluster.ssh.command_timeout_s), open_bmc,
                             &opts.desired);
  RealNodeTransport transport(cluster, shells, bmcs);
  auto leases = plans::MakeShellLeases(transport);
  plans::RealClock clock;
  auto observer = MakeObserver(g_.format, g_.format != "json" && isatty(1), ColorOn(g_.color, stdout));
  deps.leases = leases.get();
  deps.prober = &prober;
  deps.transport = &transport;
  deps.modules = [](std::string_view n) { return modules::FindModule(n); };
  deps.all_modules = modules::AllModules();
  deps.clock = &clock;
  deps.observer = observer.get();
  deps.crash = CrashHookFromEnv();
  InstallApplySignals();
  return plans::RunRollout(plan, opts, deps);
}

// The flags as the session takes them; an error for a value no flag allows.
Result<plans::ApplyRequest> RequestOf(const GlobalOptions& g, const ApplyArgs& a) {
  if (g.working_tree)
    return Diagnostic::Error("apply.working-tree",
                             "apply never reads uncommitted files; commit them first");
  const std::optional<long> ttl_s = inventory::ParseDuration(a.lock_ttl);
  if (!ttl_s || *ttl_s < kMinLockTtlS || *ttl_s > kMaxLockTtlS)
    return Diagnostic::Error(
        "apply.lock-ttl", fmt::format("--lock-ttl {}: not a duration from 10s to 24h", a.lock_ttl), {},
        {}, "like --lock-ttl 10m (the default) or --lock-ttl 90s");
  plans::ApplyRequest r;
  r.plan_file = a.plan_file;
  r.resume = a.resume;
  r.resume_run = a.resume_run;
  r.retry_failed = a.retry_failed;
  r.force_unlock = a.force_unlock;
  r.dead_owner = a.dead_owner;
  r.limit = a.limit;
  r.repo = g.repo;
  r.ref = g.ref;
  r.repo_given = a.given.count("--repo") > 0;
  r.ref_given = a.given.count("--ref") > 0;
  r.auto_approve = a.auto_approve;
  r.json = g.format == "json";
  r.plan_out = a.plan_out;
  r.trust_from = a.trust_from;
  r.lock_ttl = std::chrono::seconds(*ttl_s);
  r.timing.reboot_timeout = std::chrono::seconds(a.reboot_timeout_s);
  r.timing.reboot_grace = std::chrono::seconds(a.reboot_grace_s);
  r.timing.poll_max = std::chrono::milliseconds(a.poll_max_ms);
  if (const char* hb = std::getenv("PLUMB_HEARTBEAT_S"); hb && std::atoi(hb) > 0)
    r.timing.heartbeat = std::chrono::seconds(std::atoi(hb));   // tests: a beat in seconds
  return r;
}

// This process as the owner of the lock and the run.
void SetOwner(plans::ApplyRequest& r, const ApplyArgs& a) {
  r.host = plans::HostName();
  r.pid = getpid();
  r.process_start = plans::ProcessStart(getpid());
  r.user = plans::UserName();
  r.who = plans::WhoFromEnvironment([](const char* v) { return std::getenv(v); },
                                    plans::UserName(), a.approved_by);
}

}  // namespace

int RunApply(const GlobalOptions& g, const ApplyArgs& a) {
  if (auto conflicts = plans::ApplyFlagConflicts(a.given, !a.plan_file.empty()); !conflicts.empty()) {
    for (const std::string& c : conflicts) ApplyErr("plumb apply: error: " + c);
    ApplyErr("hint: plumb apply --help lists what each flag does in each mode");
    return ExitCodeFor(kApplyVerb, Outcome::kError);
  }
  auto req = RequestOf(g, a);
  if (!req) return ApplyFail(req.error());
  const std::optional<long> task_s = inventory::ParseDuration(a.task_timeout);
  const std::optional<long> power_s = inventory::ParseDuration(a.power_timeout);
  if (!task_s || *task_s <= 0 || !power_s || *power_s <= 0)
    return ApplyFail(Diagnostic::Error(
        "apply.wait-timeout",
        fmt::format("--task-timeout {} / --power-timeout {}: not a duration", a.task_timeout,
                    a.power_timeout),
        {}, {}, "like --task-timeout 45m (the default) or --power-timeout 90s"));
  RealApplyWorld world(g, a, std::chrono::seconds(*task_s), std::chrono::seconds(*power_s));
  auto chosen = plans::ChosenStore(a.journal);
  if (!chosen) return ApplyFail(chosen.error());
  req->journal_name = plans::RedactStore(*chosen);   // what messages show
  auto jr = plans::OpenStore(*chosen);   // after `world`: gone before it, observer and all
  if (!jr) return ApplyFail(jr.error());
  SetOwner(*req, a);
  return ExitCodeFor(kApplyVerb, plans::RunApplySession(*req, **jr, world, &g_stop));
}

namespace {

using Options = std::vector<CLI::Option*>;   // the flags whose presence the conflict rules see

// What to apply: a plan file, or the repo at a ref; approval.
void AddSourceFlags(CLI::App* sub, GlobalOptions& g, ApplyArgs* a, Options& opts) {
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
}

// Which run: resume, retry, the store, the lock, the nodes. Returns --resume (its count says
// whether it was given, with or without a RUN).
CLI::Option* AddRunFlags(CLI::App* sub, ApplyArgs* a, Options& opts) {
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
  return res;
}

// The record: whose policy, who approved, the plan kept.
void AddRecordFlags(CLI::App* sub, ApplyArgs* a, Options& opts) {
  opts.push_back(sub->add_option("--trust-policy-from", a->trust_from,
                                 "Judge the commit by the signing policy (policy.yaml) at this ref "
                                 "(default: the commit's first parent; never the commit itself)"));
  opts.push_back(sub->add_option("--approved-by", a->approved_by,
                                 "Who approved this change, for the run record (default: "
                                 "$PLUMB_APPROVED_BY, which the CI recipes set)"));
  opts.push_back(sub->add_option("--plan-out", a->plan_out,
                                 "Also write the plan being applied here (after --limit)"));
}

// How long things may take, and how the run is shown.
void AddTimingFlags(CLI::App* sub, GlobalOptions& g, ApplyArgs* a, Options& opts) {
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
}

constexpr const char* kApplyExamples =
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
    "  plumb apply --force-unlock RUN             release a dead run's lock";

}  // namespace

void RegisterApply(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* a = new ApplyArgs;   // lives for the whole process, like the App
  CLI::App* sub = app.add_subcommand(
      "apply",
      "Apply a plan rolling-with-drain: per batch, lease and drain each node, change, reboot, "
      "verify, health-check, return to service; journaled and resumable.\n"
      "Exit: 0 done, 1 error/failed/halted (or the journal could not be written), 3 incomplete "
      "(paused by the window or an unreachable scheduler; stale or busy nodes), 130 interrupted.");
  Options opts;
  AddSourceFlags(sub, g, a, opts);
  CLI::Option* res = AddRunFlags(sub, a, opts);
  AddRecordFlags(sub, a, opts);
  AddTimingFlags(sub, g, a, opts);
  sub->footer(kApplyExamples);
  sub->callback([&g, a, res, opts, &run] {
    a->resume = res->count() > 0;
    for (CLI::Option* o : opts)
      if (o->count() > 0) a->given.insert(o->get_name());
    run = [&g, a] { return RunApply(g, *a); };
  });
}

}  // namespace plumb::cmd
