#include "plans/rollout/gather_prober.h"

namespace plumb::plans {

NodeFacts ToFacts(const NodeObservation& o) {
  NodeFacts f;
  f.readable = o.reachable;
  if (!o.reachable) {
    f.unreadable_reason = o.error.code.empty() ? o.error.message : o.error.code + ": " + o.error.message;
    return f;
  }
  for (const auto& [name, r] : o.facts) {
    // Read in part (part errors) counts as an error here too: apply never acts on half a view.
    if (std::string problem = modules::ModuleProblemText(r); !problem.empty())
      f.module_errors[name] = std::move(problem);
    if (r.ok()) f.facts[name] = r.value();
  }
  f.facts_digest = o.facts_digest;
  return f;
}

NodeFacts GatherProber::Probe(const std::string& node) {
  const inventory::Node* n = cluster_.FindNode(node);
  if (!n) {
    NodeFacts f;
    f.readable = false;
    f.unreadable_reason = "not in the inventory";
    return f;
  }
  auto shell = shells_.Open(*n);
  NodeObservation o = ProbeNode(node, *shell, modules_, timeout_);
  if (!o.reachable || n->bmc.empty() || !open_bmc_ || !desired_) return ToFacts(o);
  auto want = desired_->find(node);
  if (want == desired_->end()) return ToFacts(o);
  std::vector<const modules::Module*> bmc_modules;
  for (const modules::Module* m : modules_)
    if (m->HasBmcProbe() && m->Wants(want->second)) bmc_modules.push_back(m);
  if (bmc_modules.empty()) return ToFacts(o);
  ObservedState one;
  one.nodes.emplace(node, std::move(o));
  MergeBmcObservations(GatherBmc(BmcTargetsOf({n}), bmc_modules, 1, open_bmc_), bmc_modules, one);
  return ToFacts(one.nodes.at(node));
}

}  // namespace plumb::plans
