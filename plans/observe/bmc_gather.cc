#include "plans/observe/bmc_gather.h"

#include <thread>

#include "plans/core/parallel.h"

namespace plumb::plans {

std::vector<BmcObservation> GatherBmc(const std::vector<BmcTarget>& targets,
                                      const std::vector<const modules::Module*>& modules,
                                      int fanout, const OpenBmc& open) {
  std::vector<BmcObservation> out(targets.size());
  ForEachBounded(targets.size(), fanout, [&](size_t i) {
    auto start = std::chrono::steady_clock::now();
    BmcObservation& o = out[i];
    o.node = targets[i].node;
    o.url = targets[i].url;
    try {
      // The client's destructor logs out, whatever happens below.
      std::unique_ptr<transport::Bmc> bmc = open(targets[i]);
      auto root = bmc->ServiceRoot();
      if (!root.ok()) {
        o.error = root.error();
      } else {
        o.reachable = true;
        for (const auto* m : modules) {
          if (!m->HasBmcProbe()) continue;
          o.facts.emplace(std::string(m->Name()), m->ProbeBmc(*bmc));
        }
      }
    } catch (const std::exception& e) {
      o.error = Diagnostic::Error("bmc.internal", targets[i].node + ": " + e.what());
    }
    o.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  return out;
}

nlohmann::json ToJson(const BmcObservation& o) {
  nlohmann::json facts = nlohmann::json::object(), errors = nlohmann::json::object();
  for (const auto& [name, r] : o.facts) {
    if (r.ok()) facts[name] = r.value();
    else errors[name] = r.error().ToJson();
  }
  nlohmann::json j = {{"node", o.node}, {"bmc", o.url}, {"reachable", o.reachable},
                      {"facts", facts}, {"errors", errors}, {"elapsed_s", o.elapsed_s}};
  if (!o.reachable) j["error"] = o.error.ToJson();
  return j;
}

std::vector<BmcTarget> BmcTargetsOf(const std::vector<const inventory::Node*>& nodes) {
  std::vector<BmcTarget> targets;
  for (const inventory::Node* n : nodes)
    if (!n->bmc.empty()) targets.push_back({n->name, n->bmc, n->bmc_system});
  return targets;
}

void MergeBmcObservations(std::vector<BmcObservation>&& bmc,
                          const std::vector<const modules::Module*>& bmc_modules,
                          ObservedState& observed) {
  for (BmcObservation& b : bmc) {
    auto it = observed.nodes.find(b.node);
    if (it == observed.nodes.end() || !it->second.reachable) continue;
    NodeObservation& o = it->second;
    if (!b.reachable) {
      for (const modules::Module* m : bmc_modules) {
        Diagnostic e = b.error;
        e.message = "BMC unreachable: " + (e.message.empty() ? e.code : e.message);
        o.facts.insert_or_assign(std::string(m->Name()), Result<modules::Facts>(std::move(e)));
      }
    } else {
      for (auto& [module, r] : b.facts) o.facts.insert_or_assign(module, std::move(r));
    }
  }
}

ObservedState GatherWithBmc(const std::vector<const inventory::Node*>& nodes,
                            const std::vector<const modules::Module*>& modules,
                            ShellFactory& shells, const GatherOptions& options,
                            ProgressObserver* progress, const OpenBmc& open) {
  std::vector<const modules::Module*> bmc_modules;
  for (const modules::Module* m : modules)
    if (m->HasBmcProbe()) bmc_modules.push_back(m);
  std::vector<BmcTarget> targets;
  if (open && !bmc_modules.empty()) targets = BmcTargetsOf(nodes);
  std::vector<BmcObservation> bmc;
  // The BMCs on a thread of their own while this one reads the nodes: a node's SSH round trip
  // and its BMC's dozens of requests overlap instead of adding up.
  std::thread bmc_side;
  if (!targets.empty())
    bmc_side = std::thread([&] { bmc = GatherBmc(targets, bmc_modules, options.fanout, open); });
  struct Join {
    std::thread& t;
    ~Join() {
      if (t.joinable()) t.join();
    }
  } join{bmc_side};
  ObservedState observed = Gather(nodes, modules, shells, options, progress);
  if (bmc_side.joinable()) bmc_side.join();
  MergeBmcObservations(std::move(bmc), bmc_modules, observed);
  return observed;
}

UnreadBmcFacts::UnreadBmcFacts(const std::vector<const inventory::Node*>& nodes,
                               const std::vector<const modules::Module*>& bmc_modules)
    : modules_(bmc_modules) {
  for (const inventory::Node* n : nodes)
    if (!n->bmc.empty()) with_bmc_.insert(n->name);
}

void UnreadBmcFacts::Mark(NodeObservation& n) const {
  if (!n.reachable || !with_bmc_.count(n.node)) return;
  bool digest_kept = false;
  for (const modules::Module* m : modules_) {
    const std::string name(m->Name());
    if (n.facts.count(name)) continue;
    if (!digest_kept && n.facts_digest.empty()) n.facts_digest = FactsDigest(n.facts);
    digest_kept = true;
    n.facts.emplace(name, Result<modules::Facts>(Diagnostic::Error(
                              "facts.bmc-unread",
                              "the snapshot has no " + name +
                                  " facts: it was gathered without reading this node's BMC",
                              {}, {},
                              "gather with defaults.bmc.credentials set (not --no-bmc), or "
                              "read live without --facts")));
  }
}

}  // namespace plumb::plans
