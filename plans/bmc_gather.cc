#include "plans/bmc_gather.h"

#include "plans/parallel.h"

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

}  // namespace plumb::plans
