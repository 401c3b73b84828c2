#include "plans/session/bmc_session.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "inventory/node_pattern.h"
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

}  // namespace plumb::plans
