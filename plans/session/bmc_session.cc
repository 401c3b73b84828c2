#include "plans/session/bmc_session.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "inventory/node_pattern.h"
#include "inventory/version.h"
#include "plans/core/file_text.h"
#include "modules/transport/url.h"

namespace plumb::plans {
namespace {

// https only, no user:password in it (OriginOf's message never echoes those).
Status CheckBmcUrl(const BmcTarget& t, const Location& where) {
  auto origin = transport::OriginOf(t.url);
  if (origin.ok()) return OkStatus();
  Diagnostic d = origin.error();
  d.where = where;
  d.message = fmt::format("node {}: {}", t.node, d.message);
  return d;
}

// One node's plan: each pinned module read and diffed; false when the cancel came.
bool PlanOneBmc(const BmcTarget& t, const nlohmann::json& desired,
                const std::vector<const modules::Module*>& mods, transport::Bmc& bmc,
                const BmcPlanHooks& hooks, BmcPlanOutcome& out, nlohmann::json& node,
                std::vector<std::string>& failed) {
  std::vector<std::string> said;   // one BMC error fails every module: say it once
  for (const modules::Module* m : mods) {
    if (!m->Wants(desired)) continue;
    auto facts = m->ProbeBmc(bmc);
    if (hooks.cancelled && hooks.cancelled()) {
      out.stopped = t.node + ": stopped reading its BMC";
      return false;
    }
    if (!facts.ok()) {
      std::string text = facts.error().ToString();
      if (std::find(said.begin(), said.end(), text) == said.end()) {
        if (hooks.error) hooks.error("plumb: " + t.node + ": " + text);
        said.push_back(text);
      }
      failed.push_back(std::string(m->Name()));
      node["unreadable"][std::string(m->Name())] = facts.error().ToJson();
      out.partial = true;
      continue;
    }
    for (const auto& a : m->Diff(desired, facts.value())) {
      out.changes = true;
      if (hooks.change)
        hooks.change(fmt::format("{}: {}  [{}]", t.node, a.summary,
                                 modules::DisruptionName(a.disruption)));
      node["actions"].push_back(a.ToJson());
    }
  }
  return true;
}

}  // namespace

Result<std::vector<BmcTarget>> ParseBmcTargets(std::istream& in, const std::string& file) {
  std::vector<BmcTarget> out;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream ls(line);
    BmcTarget t;
    if (!(ls >> t.node >> t.url) || t.node[0] == '#') continue;
    // Further words are ignored (bmcs.txt of the testbed lists vendor and node there), except
    // system=ID: the node's system on a BMC that manages several (bmc_system in a repo).
    for (std::string word; ls >> word;)
      if (word.rfind("system=", 0) == 0) t.system = word.substr(7);
    if (Status s = CheckBmcUrl(t, Location{file, line_no, 0}); !s.ok()) return s.error();
    out.push_back(t);
  }
  return out;
}

Result<std::vector<BmcTarget>> BmcTargetsOfCluster(const inventory::LoadedCluster& loaded,
                                                   std::map<std::string, nlohmann::json>& desired) {
  std::vector<BmcTarget> out;
  for (const auto& n : loaded.cluster.nodes) {
    if (n.bmc.empty()) continue;
    BmcTarget t{n.name, n.bmc, n.bmc_system};
    if (Status s = CheckBmcUrl(t, n.where); !s.ok()) return s.error();
    out.push_back(t);
    auto d = loaded.desired.find(n.name);
    if (d != loaded.desired.end()) desired[n.name] = d->second.desired;
  }
  return out;
}

Result<std::vector<BmcTarget>> SelectBmcTargets(const std::vector<BmcTarget>& targets,
                                                const std::vector<std::string>& patterns) {
  if (patterns.empty()) return targets;
  std::vector<BmcTarget> keep;
  for (const auto& pattern : patterns) {
    const inventory::NodePattern p(pattern);
    for (const auto& t : p.terms()) {
      if (t.exclude || t.group) continue;
      bool any = false;
      for (const auto& target : targets) any = any || t.term.Matches(target.node);
      if (!any)
        return Diagnostic::Error("cli.node", "no node with a BMC matches '" + t.text + "'", {}, {},
                                 "nodes are named, listed (n[1-3,5]) or globbed (gpu*)");
    }
    for (const auto& target : targets)
      if (p.Matches(target.node) &&
          std::none_of(keep.begin(), keep.end(),
                       [&](const BmcTarget& k) { return k.node == target.node; }))
        keep.push_back(target);
  }
  return keep;
}

Result<BmcAccess> ChooseBmcAccess(const BmcAccess& repo, const BmcAccess& flags) {
  BmcAccess a = repo;
  if (!flags.ca.empty()) a.ca = flags.ca;
  if (!flags.fingerprint.empty()) a.fingerprint = flags.fingerprint;
  if (!flags.credentials.empty()) a.credentials = flags.credentials;
  if (a.credentials.empty())
    return Diagnostic::Error("bmc.credentials", "no BMC credentials reference", {},
                             "defaults.bmc.credentials", "set it, or pass --credentials env:VAR");
  if (!flags.ca.empty() && !flags.fingerprint.empty())
    return Diagnostic::Error("cli.tls", "--ca and --fingerprint together: give one", {}, {},
                             "--fingerprint pins one certificate; --ca verifies a chain");
  // A fingerprint given on the command line sets the repo's CA aside, and a CA the repo's pin.
  if (!flags.fingerprint.empty()) a.ca.clear();
  if (!flags.ca.empty()) a.fingerprint.clear();
  return a;
}

BmcPlanOutcome PlanBmcs(const std::vector<BmcTarget>& targets,
                        const std::map<std::string, nlohmann::json>& desired,
                        const std::vector<const modules::Module*>& modules, const OpenBmc& open,
                        const BmcPlanHooks& hooks) {
  BmcPlanOutcome out;
  auto cancelled = [&] { return hooks.cancelled && hooks.cancelled(); };
  for (const auto& t : targets) {
    if (cancelled()) break;
    auto d = desired.find(t.node);
    const nlohmann::json want = d == desired.end() ? nlohmann::json::object() : d->second;
    auto bmc = open(t);   // logged out when it goes out of scope
    nlohmann::json node = {{"node", t.node}, {"actions", nlohmann::json::array()},
                           {"unreadable", nlohmann::json::object()}};
    std::vector<std::string> failed;
    const bool whole = PlanOneBmc(t, want, modules, *bmc, hooks, out, node, failed);
    out.nodes.push_back(node);
    if (!whole) break;   // the client closes here: its session is deleted
    if (!failed.empty()) {
      std::string mods_text;
      for (const auto& f : failed) mods_text += (mods_text.empty() ? "" : ", ") + f;
      out.unread.push_back(t.node + " (" + mods_text + ")");
    }
  }
  out.cancelled = cancelled();
  return out;
}

Status RefuseResetInService(modules::Drainer& sched, const std::string& node) {
  auto q = sched.Query({node});
  if (!q)
    return Diagnostic::Error("bmc.reset", fmt::format("{} cannot be read ({}): a node that may run "
                                                      "a job is not reset", sched.Name(),
                                                      q.error().message));
  auto it = q->find(node);
  if (it == q->end())
    return Diagnostic::Error("bmc.reset", fmt::format("{} does not know node {}: its jobs cannot "
                                                      "be checked, so it is not reset",
                                                      sched.Name(), node));
  const modules::SchedulerNode& n = it->second;
  if ((n.drain || n.down) && n.running_jobs == 0) return OkStatus();
  return Diagnostic::Error(
      "bmc.reset",
      fmt::format("{} is in service in {} ({}{}): a reset would kill what runs there", node,
                  sched.Name(), n.state,
                  n.jobs.empty() ? "" : fmt::format(", running {}", fmt::join(n.jobs, ", "))),
      {}, {},
      fmt::format("drain it first and let its jobs end (scontrol update nodename={} state=drain "
                  "reason=...), or let `plumb apply` drain, reboot and return it", node));
}

namespace {

Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::optional<std::string> text = ReadFileText(path);
  if (!text) return Diagnostic::Error("cli.file", "cannot read " + path);
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Diagnostic::Error("cli.file", path + " is not valid JSON");
  return j;
}

// The targets and what the repo says of them (desired state, TLS, credentials).
Result<BmcAccess> ReadBmcTargets(const BmcSources& src,
                                 const std::function<Result<BmcRepo>()>& load_repo, BmcSetup& s) {
  if (!src.targets_file.empty()) {
    std::ifstream in(src.targets_file);
    if (!in) return Diagnostic::Error("cli.targets", "cannot read " + src.targets_file);
    auto t = ParseBmcTargets(in, src.targets_file);
    if (!t.ok()) return t.error();
    s.targets = std::move(*t);
    return BmcAccess{};
  }
  auto repo = load_repo();
  if (!repo.ok()) return repo.error();
  auto t = BmcTargetsOfCluster(repo->loaded, s.desired);
  if (!t.ok()) return t.error();
  s.targets = std::move(*t);
  const inventory::Cluster& c = repo->loaded.cluster;
  return BmcAccess{repo->ca, c.bmc.fingerprint, c.bmc.credentials};
}

}  // namespace

Result<BmcSetup> PrepareBmcSetup(const BmcSources& src,
                                 const std::function<Result<BmcRepo>()>& load_repo) {
  BmcSetup s;
  auto repo_access = ReadBmcTargets(src, load_repo, s);
  if (!repo_access.ok()) return repo_access.error();
  auto selected = SelectBmcTargets(s.targets, src.nodes);
  if (!selected.ok()) return selected.error();
  s.targets = std::move(*selected);
  if (!src.desired_file.empty()) {
    auto d = ReadJsonFile(src.desired_file);
    if (!d.ok()) return d.error();
    for (const auto& t : s.targets) s.desired[t.node] = d.value();
  }
  auto access = ChooseBmcAccess(*repo_access, src.flags);
  if (!access.ok()) return access.error();
  s.access = std::move(*access);
  return s;
}

Status RefuseResetOfNode(const inventory::LoadedCluster& loaded, const std::string& node,
                         const DrainerMaker& make) {
  auto d = loaded.desired.find(node);
  if (d == loaded.desired.end())
    return Diagnostic::Error("bmc.reset", "node " + node + " is not in the cluster repo");
  auto policy = loaded.cluster.rollouts.find(d->second.rollout);
  if (policy == loaded.cluster.rollouts.end() ||
      policy->second.scheduler == inventory::DrainScheduler::kNone)
    return OkStatus();
  std::unique_ptr<modules::Drainer> scheduler = make(policy->second.scheduler);
  return RefuseResetInService(*scheduler, node);
}

Result<BmcWaits> BmcFlags::Waits() const { return ParseBmcWaits(task_timeout, power_timeout); }

BmcPlanEnd EndOfBmcPlan(const BmcPlanOutcome& p, bool json) {
  BmcPlanEnd end;
  end.outcome = p.partial ? Outcome::kPartial : p.changes ? Outcome::kChanges : Outcome::kInSync;
  if (json) {
    end.out = nlohmann::json{{"nodes", p.nodes}}.dump(1) + "\n";
  } else if (!p.unread.empty()) {
    end.out = fmt::format("{}; not read: {}\n",
                          p.changes ? "plan incomplete" : "no changes in what could be read",
                          fmt::join(p.unread, ", "));
  } else if (!p.changes) {
    end.out = "in sync\n";
  }
  return end;
}

Result<transport::ResetKind> BmcResetKind(const std::string& type, bool targets_given) {
  static const std::map<std::string, transport::ResetKind> kinds = {
      {"reboot", transport::ResetKind::kReboot}, {"hard-reboot", transport::ResetKind::kHardReboot},
      {"on", transport::ResetKind::kOn}, {"off", transport::ResetKind::kOff},
      {"force-off", transport::ResetKind::kForceOff}};
  auto k = kinds.find(type);
  if (k == kinds.end()) return Diagnostic::Error("cli.reset", "unknown --type " + type);
  if (targets_given)
    return Diagnostic::Error(
        "cli.reset", "bmc reset does not take --targets: the node's scheduler is read from the "
                     "cluster repo before any reset",
        {}, {}, "run it in the cluster repo (--repo DIR)");
  return k->second;
}

Result<ApplyFlags> BmcApplyFlagsOf(ApplyFlags a, const std::vector<std::string>& limits,
                                   const std::vector<const modules::Module*>& modules,
                                   bool targets_given, bool desired_given) {
  if (targets_given || desired_given)
    return Diagnostic::Error(
        "cli.bmc-apply",
        "bmc apply changes nodes only through the engine, from the cluster repo's commit: "
        "--targets and --desired are for bmc inventory and bmc plan",
        {}, {}, "commit the firmware/bios pins to the repo, then plumb bmc apply --limit NODE");
  a.only_modules.clear();
  for (const modules::Module* m : modules) a.only_modules.emplace_back(m->Name());
  a.limit.clear();
  for (const std::string& l : limits) {
    // A limit with no node in it must never widen to every node (a script's empty $NODES).
    if (std::none_of(l.begin(), l.end(), [](unsigned char c) { return std::isalnum(c); }))
      return Diagnostic::Error("cli.limit", "--limit '" + l + "' names no node", {}, "--limit",
                               "give node names, n[1-3], gpu* or @group");
    a.limit += (a.limit.empty() ? "" : ",") + l;
  }
  if (!limits.empty()) a.given.insert("--limit");
  return a;
}

}  // namespace plumb::plans
