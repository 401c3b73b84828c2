// plumb bmc: the Redfish side on its own, usable when a node's OS is down.
//   plumb bmc inventory            firmware + BIOS + power facts of every node with a BMC
//   plumb bmc plan                 what the firmware/bios/power modules would change
//   plumb bmc apply                the same changes through the engine: `plumb apply` of a plan
//                                  of the Redfish modules only (lock, lease, drain, change,
//                                  reset, verify, return to service, journaled)
//   plumb bmc reset NODE           reset a node through its BMC (ResetType from what it offers),
//                                  only a node its scheduler shows out of service with no job
// Targets come from the cluster repo (nodes with `bmc:`, defaults.bmc for TLS and credentials)
// or from --targets FILE ("name url" per line); flags override the repo's BMC settings.
// Waits (a firmware task, a reset's power state) show progress and end at --task-timeout /
// --power-timeout or on Ctrl-C/SIGTERM: then the sessions are deleted, what was in flight is
// said, and the verb exits 130 (cmd/bmc_wait.h). The command lines are cli/bmc_command.h.
#include <cstdio>
#include <mutex>


#include "cli/bmc_command.h"
#include "cmd/apply.h"
#include "cmd/apply_deps.h"
#include "cmd/bmc_factory.h"
#include "cmd/bmc_wait.h"
#include "cmd/command.h"
#include "cmd/read_run.h"
#include "cmd/repo_load.h"
#include "inventory/load.h"
#include "modules/bmc_modules.h"
#include "modules/transport/local_shell.h"
#include "plans/observe/bmc_gather.h"
#include "plans/report/bmc_inventory.h"
#include "plans/session/bmc_session.h"

namespace plumb::cmd {
namespace {

using BmcOptions = plans::BmcFlags;

struct Setup : plans::BmcSetup {
  std::shared_ptr<BmcFactory> factory;
};

std::mutex g_err_mu;
void BmcErr(const std::string& s) {
  std::lock_guard<std::mutex> lock(g_err_mu);
  std::fprintf(stderr, "%s\n", s.c_str());
}

// Set by the first SIGINT/SIGTERM; every BMC wait and read ends on it.
transport::CancelSignal& Cancel() {
  static transport::CancelSignal* c = new transport::CancelSignal();   // used by the handler
  return *c;
}

plans::report::WaitPrinter& Printer() {
  static auto* p = new plans::report::WaitPrinter(WaitPrinterForStderr());
  return *p;
}

int Interrupted(const std::string& what) {
  Printer().Done();
  BmcErr("plumb: interrupted: " + what);
  return ExitCodeFor("*", Outcome::kInterrupted);
}

// The cluster repo, for the targets and their settings (its errors said on stderr).
Result<plans::BmcRepo> LoadBmcRepo(const GlobalOptions& g) {
  plans::BmcRepo r{LoadRepo(g.repo, g.ref, g.working_tree), ""};
  if (!r.loaded.ok()) {
    std::fputs(r.loaded.diags.ToText().c_str(), stderr);
    return RepoLoadFailure(r.loaded, g.repo, g.ref, g.working_tree);
  }
  r.ca = RepoPath(g.repo, r.loaded.cluster.bmc.ca);
  return r;
}

// The Redfish sessions as the flags and the repo say, waits ending on the first signal.
Result<std::shared_ptr<BmcFactory>> Connect(const GlobalOptions& g, const BmcOptions& o,
                                            const plans::BmcAccess& access) {
  BmcConnectOptions co = BmcConnectOptions::For(access.ca, access.fingerprint, access.credentials);
  co.auth = o.Auth();
  co.per_bmc_connections = o.per_bmc;
  co.request_timeout = std::chrono::seconds(o.timeout_s);
  auto waits = o.Waits();
  if (!waits.ok()) return waits.error();
  co.task_timeout = waits->task;
  co.power_timeout = waits->power;
  co.cancel = &Cancel();
  co.progress = [](const transport::WaitProgress& p) { Printer().Show(p); };
  InstallCancelOnSignals(Cancel(), nullptr, ExitCodeFor("*", Outcome::kInterrupted));
  if (g.verbose) co.log = [](const std::string& m) {
    Printer().Done();
    BmcErr("plumb: note: " + m);
  };
  return BmcFactory::Create(co);
}

// Targets, desired state and the BMC factory, from --targets or the cluster repo.
Result<Setup> Prepare(const GlobalOptions& g, const BmcOptions& o) {
  auto setup = plans::PrepareBmcSetup(o.Sources(), [&] { return LoadBmcRepo(g); });
  if (!setup.ok()) return setup.error();
  auto f = Connect(g, o, setup->access);
  if (!f.ok()) return f.error();
  return Setup{std::move(*setup), f.value()};
}

int BmcFail(const Diagnostic& d) {
  BmcErr("plumb: " + d.ToString());
  return ExitCodeFor("*", Outcome::kError);
}

int RunInventory(const GlobalOptions& g, const BmcOptions& o) {
  auto s = Prepare(g, o);
  if (!s.ok()) return BmcFail(s.error());
  auto factory = s.value().factory;
  auto obs = plans::GatherBmc(s.value().targets, modules::BmcModules(), o.fanout,
                              [&](const plans::BmcTarget& t) { return factory->Open(t); });
  // The clients are closed (sessions deleted) once GatherBmc returns.
  if (Cancel().is_set()) return Interrupted("stopped reading the BMCs; nothing was changed");
  const nlohmann::json doc = plans::report::BmcInventoryJson(obs);
  if (!o.out.empty())
    if (Status st = WriteOutput(o.out, doc.dump(1) + "\n"); !st) return BmcFail(st.error());
  if (g.format == "json")
    std::printf("%s\n", doc.dump(1).c_str());
  else
    std::fputs(plans::report::BmcInventoryText(obs, modules::BmcModules()).c_str(), stdout);
  const bool partial = plans::report::BmcInventoryPartial(obs);
  return ExitCodeFor("bmc inventory", partial ? Outcome::kPartial : Outcome::kOk);
}

// What the firmware, bios and power modules would change on each node (read-only).
int RunPlan(const GlobalOptions& g, const BmcOptions& o) {
  auto s = Prepare(g, o);
  if (!s.ok()) return BmcFail(s.error());
  auto factory = s.value().factory;
  const bool json = g.format == "json";
  plans::BmcPlanOutcome p = plans::PlanBmcs(
      s.value().targets, s.value().desired, modules::BmcModules(),
      [&](const plans::BmcTarget& t) { return factory->Open(t); },
      {.cancelled = [] { return Cancel().is_set(); },
       .error = [](const std::string& line) { BmcErr(line); },
       .change = [json](const std::string& line) { if (!json) std::printf("%s\n", line.c_str()); }});
  if (p.cancelled) {
    if (json)
      std::printf("%s\n", nlohmann::json{{"nodes", p.nodes}, {"interrupted", true}}.dump(1).c_str());
    return Interrupted(p.stopped.empty() ? "stopped; nothing more was started" : p.stopped);
  }
  const plans::BmcPlanEnd end = plans::EndOfBmcPlan(p, json);
  std::fputs(end.out.c_str(), stdout);
  return ExitCodeFor("bmc plan", end.outcome);
}

// The node's scheduler, read right before a reset: only a node out of service (drained, or
// down) with no job may be power-cycled from here. Anything else is the engine's (plumb apply
// drains, waits for the jobs, then reboots). An error says why the reset is refused.
Status RefuseInService(const GlobalOptions& g, const std::string& node) {
  inventory::LoadedCluster lc = LoadRepo(g.repo, g.ref, g.working_tree);
  if (!lc.ok()) return RepoLoadFailure(lc, g.repo, g.ref, g.working_tree);
  transport::LocalShell local(SchedulerEnv());
  return plans::RefuseResetOfNode(lc, node, [&](inventory::DrainScheduler kind) {
    return MakeDrainer(kind, local);
  });
}

int RunReset(const GlobalOptions& g, BmcOptions o) {
  const auto kind = plans::BmcResetKind(o.reset_type, !o.targets_file.empty());
  if (!kind.ok()) return BmcFail(kind.error());
  o.nodes = {o.reset_node};
  auto s = Prepare(g, o);
  if (!s.ok()) return BmcFail(s.error());
  auto bmc = s.value().factory->Open(s.value().targets.at(0));
  auto sys = bmc->SystemLink();
  if (!sys.ok()) return BmcFail(sys.error());
  // Right before the power action, not at start: a job may have started since.
  if (Status in_service = RefuseInService(g, o.reset_node); !in_service)
    return BmcFail(in_service.error());
  auto r = bmc->Reset(sys.value(), *kind);
  Printer().Done();
  if (!r.ok() && r.error().code == transport::kCancelledCode) {
    bmc.reset();   // the session is deleted before we say so
    return Interrupted(o.reset_node + ": " + r.error().message +
                       "; the reset may have been sent: `plumb bmc inventory` shows the power state");
  }
  if (!r.ok()) return BmcFail(r.error());
  std::printf("%s: reset (%s): sent %s\n", o.reset_node.c_str(), o.reset_type.c_str(), r.value().c_str());
  return ExitCodeFor("bmc reset", Outcome::kOk);
}

// The one door: bmc apply is `plumb apply` of a plan of the Redfish modules only, with all of
// its safety (lock, lease, drain, the scheduler read before each step, verify, journal).
int RunBmcApply(const GlobalOptions& g, const cli::BmcApplyArgs& f) {
  auto a = plans::BmcApplyFlagsOf(f.a, f.limits, modules::BmcModules(), !f.refused_targets.empty(),
                                  !f.refused_desired.empty());
  if (!a.ok()) return BmcFail(a.error());
  return RunApply(g, *a);
}

}  // namespace

void RegisterBmc(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static BmcOptions o;
  static cli::BmcApplyArgs f;
  const cli::BmcCommand c = cli::AddBmcCommand(app, g, o, f);
  c.inventory->callback([&] { run = [&] { return RunInventory(g, o); }; });
  c.plan->callback([&] { run = [&] { return RunPlan(g, o); }; });
  c.apply->callback([&g, &run] { run = [&g] { return RunBmcApply(g, f); }; });
  c.reset->callback([&] { run = [&] { return RunReset(g, o); }; });
}

}  // namespace plumb::cmd
