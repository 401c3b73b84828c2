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
// The flags are cli/apply_command.h; this file holds the prompt, the signals, the real
// transports and the outcome -> exit code table; the session (plan, lock, run record, run) is
// plans/session/apply_session.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli/apply_command.h"
#include "cmd/apply.h"
#include "cmd/apply_deps.h"
#include "cmd/bmc_factory.h"
#include "cmd/bmc_wait.h"
#include "cmd/color.h"
#include "cmd/command.h"
#include "cmd/repo_load.h"
#include "cmd/read_run.h"
#include "cmd/ssh_factory.h"
#include "cmd/subcommands.h"
#include "inventory/load.h"
#include "modules/registry.h"
#include "modules/transport/cancel_signal.h"
#include "modules/transport/local_shell.h"
#include "plans/rollout/cluster_transport.h"
#include "plans/rollout/rollout.h"
#include "plans/session/apply_flags.h"
#include "plans/session/apply_session.h"
#include "plans/session/local_apply_world.h"
#include "plans/session/test_hooks.h"
#include "plans/store/run_who.h"
#include "plans/store/store.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kApplyVerb = "apply";
namespace {

std::atomic<bool> g_apply_stop{false};
// Ends the BMC waits (a firmware task, a reset's power state) at the first signal: a step
// waiting on one is journaled interrupted, its task with it, and --resume follows that task.
transport::CancelSignal& ApplyCancel() {
  static transport::CancelSignal* c = new transport::CancelSignal();   // used by the handler
  return *c;
}

const char* ApplyEnv(const char* name) { return std::getenv(name); }

void ApplyErr(const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); }

int ApplyFail(const Diagnostic& d) {
  ApplyErr("plumb apply: " + d.ToString());
  return ExitCodeFor(kApplyVerb, Outcome::kError);
}

// The session's outside world, the real one: the files and streams (plans::LocalApplyWorld), the
// repo, plumb plan's read run, ssh-keygen and gpg, the schedulers on this host, the terminal,
// SSH and Redfish.
class RealApplyWorld final : public plans::LocalApplyWorld {
 public:
  RealApplyWorld(const GlobalOptions& g, const ApplyArgs& a, std::chrono::milliseconds task,
                 std::chrono::milliseconds power)
      : g_(g), a_(a), task_(task), power_(power), local_(SchedulerEnv()) {}

  Result<plans::PlannedNow> PlanNow(const std::string& repo, const std::string& ref,
                                    const std::string& limit) override;
  inventory::LoadedCluster Load(const std::string& repo, const std::string& ref) override {
    return LoadRepo(repo, ref, false);
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
  plans::RolloutResult Run(const plans::Plan& plan, const plans::RolloutOptions& opts,
                           plans::RolloutDeps& deps, const inventory::LoadedCluster& loaded,
                           const std::string& repo) override;

 private:
  std::shared_ptr<BmcFactory> Bmcs(const inventory::Cluster& cluster, const std::string& repo);

  const GlobalOptions& g_;
  const ApplyArgs& a_;
  const std::chrono::milliseconds task_, power_;
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
  read.run.limit = limit;
  read.run.only_modules = a_.only_modules;
  read.check_trust = true;
  read.trust_from = a_.trust_from;
  auto rr = DoReadRun(at, read);
  if (!rr.ok()) return rr.error();
  return plans::SealPlannedNow(
      {std::move((*rr)->run.plan), std::move((*rr)->loaded), std::move((*rr)->trust)},
      (*rr)->run.diags);
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
  BmcConnectOptions co = BmcConnectOptions::For(RepoPath(repo, cluster.bmc.ca),
                                                cluster.bmc.fingerprint, cluster.bmc.credentials);
  co.task_timeout = task_;
  co.power_timeout = power_;
  co.cancel = &ApplyCancel();
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
  std::unique_ptr<SshShellFactory> shells = MakeNodeShells(cluster.ssh, repo, false);
  std::shared_ptr<BmcFactory> bmcs = Bmcs(cluster, repo);
  plans::OpenBmc open_bmc;
  if (bmcs) open_bmc = [bmcs](const plans::BmcTarget& t) { return bmcs->Open(t); };
  plans::ClusterRolloutParts parts(loaded, *shells, open_bmc, modules::AllModules(), &opts.desired);
  parts.Fill(deps);
  auto observer = MakeObserver(g_.format, g_.format != "json" && isatty(1), ColorOn(g_.color, stdout));
  deps.modules = [](std::string_view n) { return modules::FindModule(n); };
  deps.all_modules = modules::AllModules();
  deps.observer = observer.get();
  deps.crash = plans::TestHooksFromEnv(ApplyEnv);
  // First Ctrl-C: finish or abandon in-flight steps, journal, exit 130. Second: leave now (the
  // journal already holds every intent; --resume re-checks).
  InstallCancelOnSignals(ApplyCancel(), &g_apply_stop, ExitCodeFor(kApplyVerb, Outcome::kInterrupted));
  return plans::RunRollout(plan, opts, deps);
}

}  // namespace

int RunApply(const GlobalOptions& g, const ApplyArgs& a) {
  if (auto conflicts = plans::ApplyFlagConflicts(a.given, !a.plan_file.empty()); !conflicts.empty()) {
    for (const std::string& c : conflicts) ApplyErr("plumb apply: error: " + c);
    ApplyErr("hint: plumb apply --help lists what each flag does in each mode");
    return ExitCodeFor(kApplyVerb, Outcome::kError);
  }
  auto req = plans::ApplyRequestOf(a, {g.repo, g.ref, g.working_tree, g.format == "json"}, ApplyEnv);
  if (!req) return ApplyFail(req.error());
  auto waits = plans::BmcWaitsOf(a);
  if (!waits) return ApplyFail(waits.error());
  RealApplyWorld world(g, a, waits->task, waits->power);
  auto chosen = plans::ChosenStore(a.journal);
  if (!chosen) return ApplyFail(chosen.error());
  req->journal_name = plans::RedactStore(*chosen);   // what messages show
  auto jr = plans::OpenStore(*chosen);   // after `world`: gone before it, observer and all
  if (!jr) return ApplyFail(jr.error());
  plans::SetRunOwner(*req, getpid(), ApplyEnv, a.approved_by);
  return ExitCodeFor(kApplyVerb, plans::RunApplySession(*req, **jr, world, &g_apply_stop));
}

void RegisterApply(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* a = new ApplyArgs;   // lives for the whole process, like the App
  const cli::ApplyCommand c = cli::AddApplyCommand(app, g, *a);
  c.sub->callback([&g, a, &run] { run = [&g, a] { return RunApply(g, *a); }; });
}

}  // namespace plumb::cmd
