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
// said, and the verb exits 130 (cmd/bmc_wait.h).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "cmd/apply.h"
#include "cmd/apply_deps.h"
#include "cmd/bmc_factory.h"
#include "cmd/bmc_wait.h"
#include "cmd/command.h"
#include "cmd/read_run.h"
#include "cmd/repo_load.h"
#include "inventory/load.h"
#include "inventory/node_pattern.h"
#include "inventory/version.h"
#include "modules/bios/bios.h"
#include "modules/bmc_modules.h"
#include "modules/firmware/firmware.h"
#include "modules/transport/url.h"
#include "modules/transport/local_shell.h"
#include "plans/observe/bmc_gather.h"
#include "plans/session/bmc_session.h"

namespace plumb::cmd {
namespace {

struct BmcOptions {
  std::string targets_file;
  std::vector<std::string> nodes;
  std::string ca, fingerprint, credentials, auth = "auto", desired_file, out;
  int fanout = 64;
  long per_bmc = 4;
  int timeout_s = 60;
  std::string task_timeout = "45m", power_timeout = "5m";
  std::string reset_node, reset_type = "reboot";
};

struct Setup {
  std::vector<plans::BmcTarget> targets;
  std::map<std::string, nlohmann::json> desired;   // by node
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

WaitPrinter& Printer() {
  static WaitPrinter* p = new WaitPrinter(WaitPrinter::ForStderr());
  return *p;
}

int Interrupted(const std::string& what) {
  Printer().Done();
  BmcErr("plumb: interrupted: " + what);
  return ExitCodeFor("*", Outcome::kInterrupted);
}

// --task-timeout / --power-timeout: "45m", "90s", "1h".
Result<std::chrono::milliseconds> WaitFlag(const char* flag, const std::string& value) {
  auto s = inventory::ParseDuration(value);
  if (!s || *s <= 0)
    return Diagnostic::Error("cli.duration", std::string(flag) + " " + value + ": not a duration", {}, {},
                             "like 45m, 90s or 1h");
  return std::chrono::milliseconds(*s * 1000);
}

Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Diagnostic::Error("cli.file", "cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return Diagnostic::Error("cli.file", path + " is not valid JSON");
  return j;
}

// The targets and what the repo says of them (desired state, TLS, credentials), from
// --targets or the cluster repo.
Result<plans::BmcAccess> ReadTargets(const GlobalOptions& g, const BmcOptions& o, Setup& s) {
  if (!o.targets_file.empty()) {
    std::ifstream in(o.targets_file);
    if (!in) return Diagnostic::Error("cli.targets", "cannot read " + o.targets_file);
    auto t = plans::ParseBmcTargets(in, o.targets_file);
    if (!t.ok()) return t.error();
    s.targets = std::move(*t);
    return plans::BmcAccess{};
  }
  inventory::LoadedCluster lc = LoadRepo(g.repo, g.ref, g.working_tree);
  if (!lc.ok()) {
    std::fputs(lc.diags.ToText().c_str(), stderr);
    return RepoLoadFailure(lc, g.repo, g.ref, g.working_tree);
  }
  auto t = plans::BmcTargetsOfCluster(lc, s.desired);
  if (!t.ok()) return t.error();
  s.targets = std::move(*t);
  return plans::BmcAccess{RepoPath(g.repo, lc.cluster.bmc.ca), lc.cluster.bmc.fingerprint,
                          lc.cluster.bmc.credentials};
}

// The Redfish sessions as the flags and the repo say, waits ending on the first signal.
Result<std::shared_ptr<BmcFactory>> Connect(const GlobalOptions& g, const BmcOptions& o,
                                            const plans::BmcAccess& access) {
  BmcConnectOptions co;
  co.tls.ca_file = access.ca;
  co.tls.fingerprint = access.fingerprint;
  co.credentials = access.credentials;
  co.auth = o.auth == "basic" ? transport::BmcAuth::kBasic
            : o.auth == "session" ? transport::BmcAuth::kSession : transport::BmcAuth::kAuto;
  co.per_bmc_connections = o.per_bmc;
  co.request_timeout = std::chrono::seconds(o.timeout_s);
  auto task_timeout = WaitFlag("--task-timeout", o.task_timeout);
  if (!task_timeout.ok()) return task_timeout.error();
  auto power_timeout = WaitFlag("--power-timeout", o.power_timeout);
  if (!power_timeout.ok()) return power_timeout.error();
  co.task_timeout = task_timeout.value();
  co.power_timeout = power_timeout.value();
  co.cancel = &Cancel();
  co.progress = [](const transport::WaitProgress& p) { Printer().Show(p); };
  InstallCancelOnSignals(Cancel());
  if (g.verbose) co.log = [](const std::string& m) {
    Printer().Done();
    BmcErr("plumb: note: " + m);
  };
  return BmcFactory::Create(co);
}

// Targets, desired state and the BMC factory, from --targets or the cluster repo.
Result<Setup> Prepare(const GlobalOptions& g, const BmcOptions& o) {
  Setup s;
  auto repo_access = ReadTargets(g, o, s);
  if (!repo_access.ok()) return repo_access.error();
  auto selected = plans::SelectBmcTargets(s.targets, o.nodes);
  if (!selected.ok()) return selected.error();
  s.targets = std::move(*selected);
  if (!o.desired_file.empty()) {
    auto d = ReadJsonFile(o.desired_file);
    if (!d.ok()) return d.error();
    for (const auto& t : s.targets) s.desired[t.node] = d.value();
  }
  auto access = plans::ChooseBmcAccess(*repo_access, {o.ca, o.fingerprint, o.credentials});
  if (!access.ok()) return access.error();
  auto f = Connect(g, o, *access);
  if (!f.ok()) return f.error();
  s.factory = f.value();
  return s;
}

int BmcFail(const Diagnostic& d) {
  BmcErr("plumb: " + d.ToString());
  return ExitCodeFor("*", Outcome::kError);
}

std::string Summary(const plans::BmcObservation& o) {
  if (!o.reachable) {
    return fmt::format("{:<12} unreachable [{}]: {}{}", o.node, o.error.code, o.error.message,
                       o.error.hint.empty() ? "" : "\n  hint: " + o.error.hint);
  }
  std::string s = fmt::format("{:<12}", o.node);
  for (const auto& [name, r] : o.facts) {
    if (!r.ok()) { s += " " + name + ": error " + r.error().code; continue; }
    const auto& f = r.value();
    if (name == "power") {
      s += fmt::format(" power {} health {}", f["power_state"].is_string() ? f["power_state"].get<std::string>() : "?",
                       f["health"].is_string() ? f["health"].get<std::string>() : "?");
    } else if (name == "firmware") {
      s += fmt::format(" firmware {} components", f["components"].size());
    } else if (name == "bios") {
      s += fmt::format(" bios {} attributes ({} pending)", f["attributes"].size(), f["pending"].size());
    }
  }
  return s;
}

int RunInventory(const GlobalOptions& g, const BmcOptions& o) {
  auto s = Prepare(g, o);
  if (!s.ok()) return BmcFail(s.error());
  const auto& mods = modules::BmcModules();
  auto factory = s.value().factory;
  auto obs = plans::GatherBmc(s.value().targets, mods, o.fanout,
                              [&](const plans::BmcTarget& t) { return factory->Open(t); });
  // The clients are closed (sessions deleted) once GatherBmc returns.
  if (Cancel().is_set()) return Interrupted("stopped reading the BMCs; nothing was changed");
  bool partial = false;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& ob : obs) {
    if (!ob.reachable) partial = true;
    for (const auto& [n, r] : ob.facts) if (!r.ok()) partial = true;
    all.push_back(plans::ToJson(ob));
  }
  if (!o.out.empty()) {
    Status st = WriteOutput(
        o.out, nlohmann::json{{"format", "plumb.bmc-inventory/v1"}, {"nodes", all}}.dump(1) + "\n");
    if (!st) return BmcFail(st.error());
  }
  if (g.format == "json") {
    std::printf("%s\n", nlohmann::json{{"format", "plumb.bmc-inventory/v1"}, {"nodes", all}}.dump(1).c_str());
  } else {
    for (const auto& ob : obs) {
      std::printf("%s\n", Summary(ob).c_str());
      std::vector<std::string> said;   // one cause (no system named) fails every module
      for (const auto& [n, r] : ob.facts) {
        if (r.ok()) continue;
        std::string text = r.error().ToString();
        if (std::find(said.begin(), said.end(), text) != said.end()) continue;
        said.push_back(text);
        std::printf("  %s\n", text.c_str());
      }
    }
    std::printf("%zu BMCs, %s\n", obs.size(), partial ? "some unreadable" : "all read");
  }
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
  std::string not_read;
  for (const auto& u : p.unread) not_read += (not_read.empty() ? "" : ", ") + u;
  if (json) {
    std::printf("%s\n", nlohmann::json{{"nodes", p.nodes}}.dump(1).c_str());
  } else if (!p.unread.empty()) {
    // Never "in sync" over what could not be read.
    std::printf("%s; not read: %s\n", p.changes ? "plan incomplete" : "no changes in what could be read",
                not_read.c_str());
  } else if (!p.changes) {
    std::printf("in sync\n");
  }
  const std::string_view verb = "bmc plan";
  if (p.partial) return ExitCodeFor(verb, Outcome::kPartial);
  return ExitCodeFor(verb, p.changes ? Outcome::kChanges : Outcome::kInSync);
}

// The node's scheduler, read right before a reset: only a node out of service (drained, or
// down) with no job may be power-cycled from here. Anything else is the engine's (plumb apply
// drains, waits for the jobs, then reboots). An error says why the reset is refused.
Status RefuseInService(const GlobalOptions& g, const std::string& node) {
  inventory::LoadedCluster lc = LoadRepo(g.repo, g.ref, g.working_tree);
  if (!lc.ok()) return RepoLoadFailure(lc, g.repo, g.ref, g.working_tree);
  auto d = lc.desired.find(node);
  if (d == lc.desired.end())
    return Diagnostic::Error("bmc.reset", "node " + node + " is not in the cluster repo");
  auto policy = lc.cluster.rollouts.find(d->second.rollout);
  if (policy == lc.cluster.rollouts.end() ||
      policy->second.scheduler == inventory::DrainScheduler::kNone)
    return OkStatus();   // no scheduler runs jobs there, by the repo's own word
  transport::LocalShell local(SchedulerEnv());
  std::unique_ptr<modules::Drainer> sched = MakeDrainer(policy->second.scheduler, local);
  return plans::RefuseResetInService(*sched, node);
}

int RunReset(const GlobalOptions& g, BmcOptions o) {
  static const std::map<std::string, transport::ResetKind> kinds = {
      {"reboot", transport::ResetKind::kReboot}, {"hard-reboot", transport::ResetKind::kHardReboot},
      {"on", transport::ResetKind::kOn}, {"off", transport::ResetKind::kOff},
      {"force-off", transport::ResetKind::kForceOff}};
  auto k = kinds.find(o.reset_type);
  if (k == kinds.end()) return BmcFail(Diagnostic::Error("cli.reset", "unknown --type " + o.reset_type));
  if (!o.targets_file.empty())
    return BmcFail(Diagnostic::Error(
        "cli.reset", "bmc reset does not take --targets: the node's scheduler is read from the "
                     "cluster repo before any reset",
        {}, {}, "run it in the cluster repo (--repo DIR)"));
  o.nodes = {o.reset_node};
  auto s = Prepare(g, o);
  if (!s.ok()) return BmcFail(s.error());
  auto bmc = s.value().factory->Open(s.value().targets.at(0));
  auto sys = bmc->SystemLink();
  if (!sys.ok()) return BmcFail(sys.error());
  // Right before the power action, not at start: a job may have started since.
  if (Status in_service = RefuseInService(g, o.reset_node); !in_service)
    return BmcFail(in_service.error());
  auto r = bmc->Reset(sys.value(), k->second);
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

void AddBmcOptions(CLI::App* sub, GlobalOptions& g, BmcOptions& o) {
  AddSourceOptions(*sub, g);
  sub->add_option("--targets", o.targets_file,
                  "File of \"NAME URL [system=ID]\" lines instead of the repo's nodes (system=: the "
                  "node's system on a BMC that manages several, like bmc_system)");
  sub->add_option("--limit,--node", o.nodes,
                  "Only these nodes: names, host lists (n[1-3,5]), globs (gpu*), !exclusions "
                  "(repeatable)");
  sub->add_option("--ca", o.ca, "CA bundle that signs the BMC certificates (overrides bmc.ca)");
  sub->add_option("--fingerprint", o.fingerprint, "Pinned SHA-256 certificate fingerprint (sha256:AB:CD:...)");
  sub->add_option("--credentials", o.credentials, "env:VAR or file:/path holding user:password");
  sub->add_option("--auth", o.auth, "auto | session | basic")->capture_default_str();
  sub->add_option("--fanout", o.fanout, "BMCs at once")->capture_default_str();
  sub->add_option("--per-bmc", o.per_bmc, "Connections per BMC")->capture_default_str();
  sub->add_option("--timeout", o.timeout_s, "Per-request timeout, seconds")->capture_default_str();
  sub->add_option("--task-timeout", o.task_timeout,
                  "How long a firmware update's task may run (45m, 90s, 1h)")->capture_default_str();
  sub->add_option("--power-timeout", o.power_timeout,
                  "How long a reset may take to reach its power state")->capture_default_str();
  sub->add_option("--format", g.format, "text | json")->capture_default_str();
  sub->add_flag("-v,--verbose", g.verbose, "Print notes (retries, fallbacks, non-conformance)");
}

// `bmc apply`'s own flags (a subset of plumb apply's, and two it refuses).
struct BmcApplyFlags {
  ApplyArgs a;
  std::vector<std::string> limits;
  std::string refused_targets, refused_desired;
};

// The one door: bmc apply is `plumb apply` of a plan of the Redfish modules only, with all of
// its safety (lock, lease, drain, the scheduler read before each step, verify, journal).
int RunBmcApply(const GlobalOptions& g, BmcApplyFlags& f) {
  ApplyArgs& a = f.a;
  if (!f.refused_targets.empty() || !f.refused_desired.empty())
    return BmcFail(Diagnostic::Error(
        "cli.bmc-apply",
        "bmc apply changes nodes only through the engine, from the cluster repo's commit: "
        "--targets and --desired are for bmc inventory and bmc plan",
        {}, {}, "commit the firmware/bios pins to the repo, then plumb bmc apply --limit NODE"));
  a.verb = "bmc apply";
  a.only_modules.clear();
  for (const modules::Module* m : modules::BmcModules()) a.only_modules.emplace_back(m->Name());
  a.limit.clear();
  for (const std::string& l : f.limits) {
    // A limit with no node in it must never widen to every node (a script's empty $NODES).
    if (std::none_of(l.begin(), l.end(), [](unsigned char c) { return std::isalnum(c); }))
      return BmcFail(Diagnostic::Error("cli.limit", "--limit '" + l + "' names no node", {},
                                       "--limit", "give node names, n[1-3], gpu* or @group"));
    a.limit += (a.limit.empty() ? "" : ",") + l;
  }
  if (!f.limits.empty()) a.given.insert("--limit");
  return RunApply(g, a);
}

void AddBmcApply(CLI::App* bmc, GlobalOptions& g, std::function<int()>& run) {
  static BmcApplyFlags f;
  CLI::App* apply = bmc->add_subcommand(
      "apply",
      "Change firmware, BIOS and power as the repo says, through the engine: `plumb apply` of a "
      "plan of the Redfish modules only (lock, lease, drain, change, reset, verify, return to "
      "service, journaled; --resume as for plumb apply)");
  AddSourceOptions(*apply, g);
  apply->add_option("--limit,--node", f.limits,
                    "Only these nodes: names, host lists (n[1-3,5]), globs (gpu*), @group, "
                    "!exclusions (repeatable)");
  apply->add_flag("--auto-approve", f.a.auto_approve, "Apply without asking");
  apply->add_option("--store,--journal", f.a.journal,
                    "Where runs and the cluster lock are kept (as for plumb apply)");
  apply->add_option("--reboot-timeout", f.a.reboot_timeout_s, "Seconds a reset may take")
      ->capture_default_str();
  apply->add_option("--lock-ttl", f.a.lock_ttl, "As for plumb apply")->capture_default_str();
  apply->add_option("--task-timeout", f.a.task_timeout,
                    "How long a firmware update's task may run before the node fails")
      ->capture_default_str();
  apply->add_option("--power-timeout", f.a.power_timeout,
                    "How long a BMC reset may take to reach its power state")
      ->capture_default_str();
  apply->add_option("--trust-policy-from", f.a.trust_from, "As for plumb apply");
  apply->add_option("--approved-by", f.a.approved_by, "As for plumb apply");
  apply->add_option("--format", g.format, "text | json (JSON lines of events)")
      ->check(CLI::IsMember({"text", "json"}));
  apply->add_option("--targets", f.refused_targets, "(refused: a change needs the cluster repo)");
  apply->add_option("--desired", f.refused_desired, "(refused: a change applies the repo's commit)");
  apply->callback([&] { run = [&g] { return RunBmcApply(g, f); }; });
}

}  // namespace

void RegisterBmc(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static BmcOptions o;
  CLI::App* bmc = app.add_subcommand("bmc", "Redfish BMCs: inventory, plan/apply firmware+BIOS+power, reset");
  bmc->require_subcommand(1);
  bmc->footer(
      "Examples:\n"
      "  plumb bmc inventory                           firmware, BIOS, power of every node's BMC\n"
      "  plumb bmc inventory --limit 'gpu00[1-4]' --format json --out bmc.json\n"
      "  plumb bmc plan                                what firmware/bios/power would change\n"
      "  plumb bmc apply --limit gpu001                its firmware/BIOS through the engine (drained)\n"
      "  plumb bmc reset gpu001 --type force-off       power it off\n"
      "  plumb bmc inventory --targets bmcs.txt        BMCs listed in a file, no cluster repo");
  CLI::App* inv = bmc->add_subcommand("inventory", "Firmware, BIOS and power facts from every BMC (exit 3 if some unreadable)");
  AddBmcOptions(inv, g, o);
  inv->add_option("--out", o.out, "Also write the JSON inventory to this file");
  inv->callback([&] { run = [&] { return RunInventory(g, o); }; });
  CLI::App* plan = bmc->add_subcommand("plan", "What firmware/bios/power would change (exit 2 if anything)");
  AddBmcOptions(plan, g, o);
  plan->add_option("--desired", o.desired_file, "Desired state JSON for every target (instead of the repo's stacks)");
  plan->callback([&] { run = [&] { return RunPlan(g, o); }; });
  AddBmcApply(bmc, g, run);
  CLI::App* reset = bmc->add_subcommand(
      "reset", "Reset one node through its BMC: only a node its scheduler shows out of service "
               "(drained or down) with no job; read right before the reset");
  AddBmcOptions(reset, g, o);
  reset->add_option("node", o.reset_node, "Node name")->required();
  reset->add_option("--type", o.reset_type, "reboot | hard-reboot | on | off | force-off")->capture_default_str();
  reset->callback([&] { run = [&] { return RunReset(g, o); }; });
}

}  // namespace plumb::cmd
