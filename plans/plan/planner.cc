#include "plans/plan/planner.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "plans/plan/drain_reason.h"
#include "plans/plan/findings.h"
#include "plans/plan/keys.h"
#include "plans/plan/stack_counts.h"
#include "plans/plan/waivers.h"

namespace plumb::plans {
namespace {

using modules::Disruption;

// Repair when the node's marker names a commit whose desired value at this key equals today's.
// `then` is the desired state at the marker commit (null: unknown, so intent).
ChangeReason ReasonFor(const DesiredByNode* then_all, const std::string& node,
                       const inventory::NodeDesired& now, const std::string& pointer) {
  if (then_all == nullptr) return ChangeReason::kIntent;
  auto then = then_all->find(node);
  if (then == then_all->end()) return ChangeReason::kIntent;
  const nlohmann::json a = then->second.ValueAt(pointer);
  if (!a.is_null() && a == now.ValueAt(pointer)) return ChangeReason::kRepair;
  return ChangeReason::kIntent;
}

// The commit plumb last applied on the node, from the module that records it.
std::string MarkerCommit(const nlohmann::json& facts, const modules::Registry& registry) {
  for (const modules::Module* m : registry.All()) {
    const std::string_view key = m->Info().applied_commit_key;
    if (key.empty()) continue;
    auto it = facts.find(std::string(m->Name()));
    if (it == facts.end() || !it->is_object()) continue;
    auto c = it->find(std::string(key));
    if (c != it->end() && c->is_string()) return c->get<std::string>();
  }
  return {};
}

}  // namespace

const char* ChangeReasonName(ChangeReason r) {
  return r == ChangeReason::kRepair ? "repair" : "intent";
}

const NodePlan* Plan::FindNode(const std::string& name) const {
  for (const auto& n : nodes)
    if (n.node == name) return &n;
  return nullptr;
}

const NodeWaived* Plan::FindWaived(const std::string& name) const {
  for (const auto& n : waived)
    if (n.node == name) return &n;
  return nullptr;
}

const NodeFindings* Plan::FindHealth(const std::string& name) const {
  auto it = std::lower_bound(health.begin(), health.end(), name,
                             [](const NodeFindings& h, const std::string& n) { return h.node < n; });
  if (it != health.end() && it->node == name) return &*it;
  for (const auto& h : health)   // a hand-made plan may not be in order
    if (h.node == name) return &h;
  return nullptr;
}

bool Plan::HasApplicable() const {
  return std::any_of(nodes.begin(), nodes.end(),
                     [](const NodePlan& n) { return !n.skipped_unhealthy; });
}

bool NodeFindings::Unhealthy() const {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) {
    return f.check.status == modules::CheckStatus::kFail;
  });
}

std::string ActionKey(const modules::Action& a) {
  return a.key.empty() ? schemas::PointerToKey(a.pointer) : a.key;
}

int EstimateSeconds(Disruption d) {
  switch (d) {
    case Disruption::kNone: return 15;
    case Disruption::kServiceRestart: return 45;
    case Disruption::kDrain: return 180;
    case Disruption::kReboot: return 600;
    case Disruption::kFirmwareFlash: return 1500;
  }
  return 0;
}

std::vector<const modules::Module*> OrderModules(const std::vector<const modules::Module*>& mods,
                                                 Diagnostics& diags) {
  // Kahn's algorithm, always picking the earliest ready module in registry order, so the
  // result is deterministic and equal to the registry order when no After() constrains it.
  std::map<std::string_view, size_t> index;
  for (size_t i = 0; i < mods.size(); ++i) index[mods[i]->Name()] = i;
  std::vector<std::set<size_t>> deps(mods.size());
  for (size_t i = 0; i < mods.size(); ++i) {
    for (auto name : mods[i]->After()) {
      auto it = index.find(name);
      if (it != index.end()) deps[i].insert(it->second);  // absent = not in this run: no edge
    }
  }
  std::vector<const modules::Module*> out;
  std::vector<bool> done(mods.size(), false);
  while (out.size() < mods.size()) {
    bool progressed = false;
    for (size_t i = 0; i < mods.size(); ++i) {
      if (done[i]) continue;
      bool ready = std::all_of(deps[i].begin(), deps[i].end(), [&](size_t d) { return done[d]; });
      if (!ready) continue;
      done[i] = true;
      out.push_back(mods[i]);
      progressed = true;
      break;
    }
    if (!progressed) {
      diags.Add(Diagnostic::Error("plan.module-cycle",
                                  "module ordering has a cycle; using registry order"));
      return mods;
    }
  }
  return out;
}

std::vector<Batch> MakeBatches(const std::vector<const NodePlan*>& nodes,
                               const inventory::Cluster& cluster,
                               const inventory::RolloutPolicy& policy, int scope_total,
                               int already_out, Diagnostics& diags) {
  std::vector<Batch> batches;
  if (nodes.empty()) return batches;
  const int capacity = policy.MaxUnavailable(scope_total) - already_out;
  // Each node's failure domain, looked up once (Cluster::FindNode is a linear scan, and the
  // batching loop below asks again for every node on every batch).
  std::unordered_map<const NodePlan*, std::string> domains;
  if (!policy.domain_by.empty()) {
    std::unordered_map<std::string_view, const inventory::Node*> by_name;
    by_name.reserve(cluster.nodes.size());
    for (const inventory::Node& n : cluster.nodes) by_name.emplace(n.name, &n);
    for (const NodePlan* n : nodes) {
      auto it = by_name.find(n->node);
      domains[n] = it == by_name.end() ? std::string() : it->second->Domain(policy.domain_by);
    }
  }
  auto domain_of = [&](const NodePlan* n) -> const std::string& {
    static const std::string kNone;
    auto it = domains.find(n);
    return it == domains.end() ? kNone : it->second;
  };

  // Order by failure domain, then name: aligned batches then fill one domain before the next.
  std::vector<const NodePlan*> remaining = nodes;
  std::stable_sort(remaining.begin(), remaining.end(), [&](const NodePlan* a, const NodePlan* b) {
    return std::make_pair(domain_of(a), a->node) < std::make_pair(domain_of(b), b->node);
  });

  // A node already out (drained by an admin, down) is counted in `already_out` for the whole
  // rollout: it is out before its batch, and an admin's drain outlasts it. Taking it into a
  // batch costs no budget.
  auto costs = [](const NodePlan* n) { return n->NeedsDrain() && !n->already_unavailable; };
  int drainers = static_cast<int>(std::count_if(remaining.begin(), remaining.end(), costs));
  if (capacity < 1 && drainers > 0) {
    diags.Add(Diagnostic::Error(
        "plan.budget-exhausted",
        fmt::format("rollout '{}': {} node(s) already out of {} allowed (max_unavailable of {} "
                    "nodes); {} node(s) needing a drain cannot be scheduled",
                    policy.name, already_out, policy.MaxUnavailable(scope_total), scope_total,
                    drainers),
        policy.where, "max_unavailable",
        "return drained/down nodes to service, or raise max_unavailable"));
  }

  // Each batch scans from the front of what is left and stops as soon as nothing more can join
  // it (its budget spent, or its aligned domains chosen and passed, and no node left that needs
  // no drain): the nodes it passed over go back, in order, just before the unscanned rest. A
  // batch costs what it looked at, not the whole fleet, so 100,000 nodes in batches of 32 is
  // linear, not 3,000 full scans.
  int free_left = static_cast<int>(remaining.size()) - drainers;   // nodes that cost no budget
  size_t head = 0;
  bool first = true;
  while (head < remaining.size()) {
    Batch b;
    b.rollout = policy.name;
    b.budget = std::max(capacity, 0);
    b.canary = first && policy.canary > 0;
    const int limit = b.canary ? std::min(policy.canary, std::max(capacity, 0)) : b.budget;
    int out = 0;
    std::map<std::string, int> per_domain;
    std::vector<const NodePlan*> passed;
    size_t i = head;
    for (; i < remaining.size(); ++i) {
      if (out >= limit && free_left == 0) break;   // nothing more can join this batch
      const NodePlan* n = remaining[i];
      bool take = true;
      const std::string& d = domain_of(n);
      // Aligned and its domains chosen: the nodes are in domain order, so once one of another
      // domain comes, every later one is of another domain too.
      if (free_left == 0 && !policy.domain_by.empty() &&
          policy.domain_mode == inventory::DomainMode::kAligned &&
          static_cast<int>(per_domain.size()) >= policy.domain_at_once && !per_domain.count(d))
        break;
      if (costs(n)) {
        if (out >= limit) take = false;
        else if (!policy.domain_by.empty()) {
          if (policy.domain_mode == inventory::DomainMode::kSpread) {
            if (per_domain[d] >= policy.domain_at_once) take = false;
          } else if (!per_domain.count(d) &&
                     static_cast<int>(per_domain.size()) >= policy.domain_at_once) {
            take = false;
          }
        }
      } else if (b.canary && static_cast<int>(b.nodes.size()) >= std::max(policy.canary, 1)) {
        take = false;   // a canary batch stays small even when its nodes need no drain
      }
      if (!take) {
        passed.push_back(n);
        continue;
      }
      b.nodes.push_back(n->node);
      if (costs(n)) {
        ++out;
        ++per_domain[d];
      } else {
        --free_left;
      }
      b.est_seconds = std::max(b.est_seconds, EstimateSeconds(n->disruption));
    }
    if (b.nodes.empty()) break;   // only nodes that need a drain are left, and no budget
    for (const auto& [d, count] : per_domain)
      if (!d.empty()) b.domains.push_back(d);
    batches.push_back(std::move(b));
    head = i - passed.size();
    std::copy(passed.begin(), passed.end(), remaining.begin() + static_cast<std::ptrdiff_t>(head));
    first = false;
  }
  return batches;
}

struct PlanBuilder::State {
  PlannerInput in;
  Plan plan;
  std::vector<const modules::Module*> ordered;
  std::set<std::string> to_plan;   ///< limit (or all) nodes that have a desired state
  std::set<std::string> added;
  std::set<std::string> seen;      ///< modules with facts or an error on some node
  /// modules_from_facts: node -> wanted modules it had no facts for, in module order; whether
  /// that makes the node unreadable is known only once every node is in (Finish).
  std::map<std::string, std::vector<std::string>> missing;
  /// Module -> the planned nodes where it could not be read whole although they pin nothing
  /// it reads, and the first such error: said in a warning, since they change no verdict.
  std::map<std::string, std::pair<std::vector<std::string>, std::string>> unneeded_errors;
  // Older commits' desired state, loaded when a node first names one: Previous is called from
  // Evaluate, on several threads, and is the one thing there that changes (under the lock).
  mutable std::map<std::string, const DesiredByNode*> loaded_previous;
  mutable std::mutex previous_mu;
  std::unique_ptr<WaiverSet> waivers;

  const DesiredByNode* Previous(const std::string& commit) const {
    if (commit.empty()) return nullptr;
    if (auto it = in.previous.find(commit); it != in.previous.end()) return it->second;
    std::lock_guard lock(previous_mu);
    auto [it, fresh] = loaded_previous.emplace(commit, nullptr);
    if (fresh && in.load_previous) it->second = in.load_previous(commit);
    return it->second;
  }
};

PlanBuilder::PlanBuilder(PlannerInput input) : s_(std::make_unique<State>()) {
  s_->in = std::move(input);
  const PlannerInput& in = s_->in;
  Plan& plan = s_->plan;
  plan.source = in.cluster->source;
  plan.cluster = in.cluster->name;
  plan.created_at = in.now;
  s_->ordered = OrderModules(in.modules, plan.diags);
  s_->waivers = std::make_unique<WaiverSet>(in.cluster->waivers, in.now.substr(0, 10));
  if (in.limit.empty()) {
    for (const auto& [name, nd] : *in.desired) s_->to_plan.insert(name);
  } else {
    for (const std::string& name : in.limit)
      if (in.desired->count(name)) s_->to_plan.insert(name);
  }
}

PlanBuilder::~PlanBuilder() = default;

const std::set<std::string>& PlanBuilder::ModulesSeen() const { return s_->seen; }

bool PlanBuilder::Added(const std::string& node) const { return s_->added.count(node) > 0; }

void PlanBuilder::Add(const std::string& name, const NodeFacts& obs) {
  if (Added(name)) return;   // the first observation counts; a repeat is not even planned
  Accept(Evaluate(name, obs));
}

EvaluatedNode PlanBuilder::Evaluate(const std::string& name, const NodeFacts& obs) const {
  const State& st = *s_;
  EvaluatedNode out;
  out.node = name;
  if (!st.to_plan.count(name)) return out;
  out.in_scope = true;
  for (const auto& [module, _] : obs.facts.items()) out.modules_seen.push_back(module);
  for (const auto& [module, _] : obs.module_errors) out.modules_seen.push_back(module);
  const PlannerInput& in = st.in;
  const inventory::NodeDesired& nd = in.desired->at(name);
  if (!obs.readable) {
    out.unreadable = UnreadableNode{name, obs.unreadable_reason};
    return out;
  }
  NodePlan& np = out.plan;
  np.node = name;
  np.rollout = nd.rollout;
  np.facts_digest = obs.facts_digest;
  np.marker_commit = MarkerCommit(obs.facts, *in.registry);
  const DesiredByNode* then = st.Previous(np.marker_commit);
  std::string problem;
  for (const modules::Module* m : st.ordered) {
    if (!m->Wants(nd.desired)) continue;
    const std::string mod(m->Name());
    if (auto e = obs.module_errors.find(mod); e != obs.module_errors.end()) {
      problem = fmt::format("probe error: {}: {}", mod, e->second);
      break;
    }
    auto f = obs.facts.find(mod);
    // An on-demand check (a DCGM diagnostic, an NCCL run) is never part of a gather: its keys
    // are judged where a health run left its facts, and are not "unread" anywhere else.
    if (f == obs.facts.end() && m->Info().on_demand) continue;
    if (f == obs.facts.end()) {
      if (in.modules_from_facts) {
        out.missing.push_back(mod);
        continue;
      }
      problem = fmt::format("no facts from module {}", mod);
      break;
    }
    // A health module's failed and warned checks are findings: shown with the node, never
    // planned as changes (nothing can apply them).
    if (m->Info().IsHealth()) {
      auto found = ModuleFindings(*m, nd, *f);
      if (!found.ok()) {
        problem = found.error().message;
        break;
      }
      for (Finding& x : *found) out.findings.push_back(std::move(x));
      continue;
    }
    // Differences a waiver covers are shown in the plan, never applied: the waiver's owner
    // decided they stay.
    auto diff = m->DiffFacts(nd.desired, *f);
    if (!diff.ok()) {
      problem = diff.error().message;
      break;
    }
    WaiverSplit split = SplitWaived(std::move(*diff), [&](const std::string& key) {
      WaiverSet::Match w = st.waivers->Find(name, key);
      return w.waiver && !w.expired ? w.waiver : nullptr;
    });
    for (WaivedPiece& p : split.waived) {
      PlannedAction pa;
      pa.reason = ReasonFor(then, name, nd, p.action.pointer);
      pa.origin = nd.OriginOf(p.action.pointer);
      pa.action = std::move(p.action);
      out.waived.push_back({std::move(pa), p.waiver->nodes, p.waiver->keys, p.waiver->reason,
                            p.waiver->owner, p.waiver->expires, p.waiver->where});
    }
    for (modules::Action& a : split.kept) {
      PlannedAction pa;
      pa.reason = ReasonFor(then, name, nd, a.pointer);
      pa.origin = nd.OriginOf(a.pointer);
      np.disruption = std::max(np.disruption, a.disruption);
      pa.action = std::move(a);
      np.actions.push_back(std::move(pa));
    }
  }
  if (!problem.empty()) {
    // A node half-read is planned for not at all: its missing facts could hide a change.
    out.unreadable = UnreadableNode{name, problem};
    return out;
  }
  for (const auto& [mod, error] : obs.module_errors) out.module_errors.emplace_back(mod, error);
  if (auto s = in.scheduler.find(name); s != in.scheduler.end()) {
    np.already_unavailable = s->second.Unavailable();
    np.admin_drained = s->second.HeldByAdmin();
    if (auto r = s->second.DrainedByPlumb() ? ParsePlumbReason(s->second.reason) : std::nullopt) {
      if (r->failed) {
        // A failed step left it out of service. This plan takes it over: changed if it still
        // differs, then verified, gated and returned to service with its reason cleared.
        np.left_by_run = r->run;
        np.left_at_step = r->step;
        np.left_reason = s->second.reason;
        np.return_to_service = np.actions.empty();
        // It is out already; returning it is a drain's worth of work (gates, resume).
        if (np.return_to_service) np.disruption = Disruption::kDrain;
      } else {
        np.held_by_run = r->run;   // another run is working on it: apply leaves it alone
      }
    }
    if (np.NeedsDrain() && s->second.running_jobs > 0)
      out.blocking = BlockingJobs{name, s->second.jobs};
  }
  // A node with something to do that fails a health check: its rollout says whether apply
  // changes it and judges it after, or leaves it as it is.
  const bool failed = std::any_of(out.findings.begin(), out.findings.end(), [](const Finding& x) {
    return x.check.status == modules::CheckStatus::kFail;
  });
  if (failed && (!np.actions.empty() || np.return_to_service)) {
    auto p = in.cluster->rollouts.find(np.rollout);
    np.skipped_unhealthy = p == in.cluster->rollouts.end() ||
                           p->second.unhealthy == inventory::RolloutPolicy::Unhealthy::kSkip;
    if (np.skipped_unhealthy) out.blocking.reset();   // it will not be drained
  }
  return out;
}

void PlanBuilder::Accept(EvaluatedNode&& e) {
  State& st = *s_;
  if (!e.in_scope || !st.added.insert(e.node).second) return;   // the first observation counts
  for (std::string& m : e.modules_seen) st.seen.insert(std::move(m));
  Plan& plan = st.plan;
  if (e.unreadable) {
    // A node that answered but could not be read whole still names the commit it is at.
    if (!e.plan.node.empty()) plan.markers[e.node] = e.plan.marker_commit;
    plan.unreadable.push_back(std::move(*e.unreadable));
    return;
  }
  NodePlan& np = e.plan;
  plan.markers[e.node] = np.marker_commit;
  for (auto& [mod, error] : e.module_errors) {
    auto [it, fresh] = st.unneeded_errors.try_emplace(mod);
    it->second.first.push_back(e.node);
    if (fresh) it->second.second = std::move(error);
  }
  if (e.blocking) plan.blocking_jobs.push_back(std::move(*e.blocking));
  if (!e.missing.empty()) st.missing.emplace(e.node, std::move(e.missing));
  if (!e.waived.empty()) plan.waived.push_back({e.node, std::move(e.waived)});
  if (!e.findings.empty()) plan.health.push_back({e.node, std::move(e.findings)});
  if (np.actions.empty() && !np.return_to_service) plan.in_sync.push_back(e.node);
  else plan.nodes.push_back(std::move(np));
}

void FormBatches(Plan& plan, const inventory::Cluster& cluster, const DesiredByNode& desired,
                 const std::map<std::string, modules::SchedulerNode>& scheduler) {
  plan.batches.clear();
  plan.rollouts.clear();
  plan.peak_unavailable = 0;
  plan.est_seconds = 0;
  // Batches, one rollout policy at a time (in name order), each against its own scope. A node
  // its rollout skips as unhealthy is in no batch; its policy is still the plan's (it says why).
  std::map<std::string, std::vector<const NodePlan*>> by_rollout;
  for (const NodePlan& np : plan.nodes) {
    auto& members = by_rollout[np.rollout];
    if (!np.skipped_unhealthy) members.push_back(&np);
  }
  for (const auto& [rollout, members] : by_rollout) {
    auto pit = cluster.rollouts.find(rollout);
    if (pit == cluster.rollouts.end()) {
      plan.diags.Add(Diagnostic::Error("plan.unknown-rollout",
                                       fmt::format("rollout policy '{}' not found", rollout)));
      continue;
    }
    const inventory::RolloutPolicy& policy = pit->second;
    plan.rollouts[rollout] = policy;
    int scope_total = 0, already_out = 0;
    for (const auto& [name, nd] : desired) {
      if (nd.rollout != rollout) continue;
      ++scope_total;
      auto s = scheduler.find(name);
      if (s != scheduler.end() && s->second.Unavailable()) ++already_out;
    }
    std::unordered_map<std::string_view, const NodePlan*> by_name;
    for (const NodePlan* n : members) by_name.emplace(n->node, n);
    for (Batch& b : MakeBatches(members, cluster, policy, scope_total, already_out,
                                plan.diags)) {
      int out = already_out;   // every node already out, in this batch or not
      for (const std::string& n : b.nodes) {
        const NodePlan* np = by_name.at(n);
        if (np->NeedsDrain() && !np->already_unavailable) ++out;
      }
      plan.peak_unavailable = std::max(plan.peak_unavailable, out);
      b.index = static_cast<int>(plan.batches.size());
      plan.est_seconds += b.est_seconds;
      plan.batches.push_back(std::move(b));
    }
    std::set<std::string> batched;
    for (const Batch& b : plan.batches)
      for (const std::string& n : b.nodes) batched.insert(n);
    for (const NodePlan* n : members)
      if (!batched.count(n->node))
        plan.diags.Add(Diagnostic::Error(
            "plan.unscheduled", fmt::format("node {} has changes but fits in no batch", n->node)));
  }
}

Plan MakePlan(const PlannerInput& in) {
  PlannerInput copy = in;
  copy.observed.clear();
  PlanBuilder b(std::move(copy));
  for (const auto& [name, facts] : in.observed) b.Add(name, facts);
  return b.Finish();
}

Plan PlanBuilder::Finish() {
  State& st = *s_;
  const PlannerInput& in = st.in;
  Plan plan = std::move(st.plan);
  // A node without facts from a module that other nodes have: it was not fully read.
  std::set<std::string> half_read;
  for (const auto& [name, mods] : st.missing) {
    for (const std::string& mod : mods) {
      if (!st.seen.count(mod)) continue;
      plan.unreadable.push_back({name, fmt::format("no facts from module {}", mod)});
      half_read.insert(name);
      break;
    }
  }
  if (!half_read.empty()) {
    auto gone = [&](const std::string& n) { return half_read.count(n) > 0; };
    plan.nodes.erase(std::remove_if(plan.nodes.begin(), plan.nodes.end(),
                                    [&](const NodePlan& n) { return gone(n.node); }),
                     plan.nodes.end());
    plan.in_sync.erase(std::remove_if(plan.in_sync.begin(), plan.in_sync.end(), gone),
                       plan.in_sync.end());
    plan.waived.erase(std::remove_if(plan.waived.begin(), plan.waived.end(),
                                     [&](const NodeWaived& w) { return gone(w.node); }),
                      plan.waived.end());
    plan.blocking_jobs.erase(
        std::remove_if(plan.blocking_jobs.begin(), plan.blocking_jobs.end(),
                       [&](const BlockingJobs& b) { return gone(b.node); }),
        plan.blocking_jobs.end());
    std::erase_if(plan.health, [&](const NodeFindings& h) { return gone(h.node); });
  }
  for (const std::string& name : st.to_plan)
    if (!st.added.count(name)) plan.unreadable.push_back({name, "not gathered"});
  // Nodes arrive in any order (a snapshot's, a gather's); the plan lists them by name.
  auto by_node = [](const auto& a, const auto& b) { return a.node < b.node; };
  std::sort(plan.nodes.begin(), plan.nodes.end(), by_node);
  std::sort(plan.in_sync.begin(), plan.in_sync.end());
  std::sort(plan.unreadable.begin(), plan.unreadable.end(), by_node);
  std::sort(plan.blocking_jobs.begin(), plan.blocking_jobs.end(), by_node);
  std::sort(plan.waived.begin(), plan.waived.end(), by_node);
  std::sort(plan.health.begin(), plan.health.end(), by_node);
  plan.complete = plan.unreadable.empty();
  // Module errors on nodes that pin nothing the module reads change no verdict; they are still
  // said (as gather says them), each module once, with its nodes.
  for (auto& [mod, entry] : st.unneeded_errors) {
    auto& [nodes, first_error] = entry;
    nodes.erase(std::remove_if(nodes.begin(), nodes.end(),
                               [&](const std::string& n) { return half_read.count(n) > 0; }),
                nodes.end());
    if (nodes.empty()) continue;
    std::sort(nodes.begin(), nodes.end());
    std::string names;
    for (size_t i = 0; i < nodes.size() && i < 8; ++i) names += (i ? ", " : "") + nodes[i];
    if (nodes.size() > 8) names += fmt::format(" and {} more", nodes.size() - 8);
    plan.diags.Add(Diagnostic::Warning(
        "probe." + mod,
        fmt::format("{} could not be read whole on {} node(s) ({}): {}; nothing they pin depends "
                    "on it, so it changes no verdict",
                    mod, nodes.size(), names, first_error),
        {}, {}, "`plumb gather --limit NODE` shows what was read and what failed"));
  }

  FormBatches(plan, *in.cluster, *in.desired, in.scheduler);
  if (in.count_stacks && plan.only_modules.empty()) {
    plan.stacks = CountStacks(plan, *in.desired, in.stack_view.empty() ? in.scheduler : in.stack_view,
                              in.stack_requests);
    for (const StackCount& c : plan.stacks)
      if (!c.stranded.empty())
        plan.diags.Add(Diagnostic::Warning(
            "plan.stack-stranded",
            fmt::format("stack {} leaves its last node ({} now, none after): {} job(s) that ask "
                        "for it would never run ({})",
                        c.stack, c.now, c.stranded.size(), StrandedText(c)),
            {}, {}, "move the jobs to another stack (--constraint), or keep a node on this one"));
  }
  return plan;
}

}  // namespace plumb::plans
