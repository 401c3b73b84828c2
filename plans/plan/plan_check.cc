#include "plans/plan/plan_check.h"

#include <algorithm>

#include <fmt/format.h>

#include "inventory/hostlist.h"
#include "inventory/node_pattern.h"
#include "plans/core/digest.h"
#include "plans/plan/desired_record.h"
#include "plans/plan/node_select.h"
#include "plans/plan/plan_json.h"

namespace plumb::plans {
namespace {

Diagnostic PlanError(std::string code, std::string message, std::string key,
                     std::string hint = "make a new plan: plumb plan --out PLAN.json") {
  return Diagnostic::Error(std::move(code), std::move(message), {}, std::move(key), std::move(hint));
}

// Does the desired value cover what the action sets? Scalars and lists compare whole; for a
// map, every member the action sets must be the desired one (an action may set part of a map).
bool Covers(const nlohmann::json& desired, const nlohmann::json& after) {
  if (after.is_object()) {
    if (!desired.is_object()) return false;
    for (auto it = after.begin(); it != after.end(); ++it) {
      auto d = desired.find(it.key());
      if (d == desired.end() || !Covers(*d, it.value())) return false;
    }
    return true;
  }
  if (desired == after) return true;
  // A module may carry a scalar as the text its tool prints (sysctl: 10 -> "10").
  auto text = [](const nlohmann::json& v) -> std::string {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number() || v.is_boolean()) return v.dump();
    return {};
  };
  const std::string a = text(desired), b = text(after);
  return !a.empty() && a == b;
}

std::string ValueText(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// The fields of a policy, each with its value as text, for a field-by-field comparison.
std::vector<std::pair<std::string, std::string>> PolicyFields(const inventory::RolloutPolicy& p) {
  auto sched = [](inventory::DrainScheduler s) {
    return s == inventory::DrainScheduler::kSlurm ? "slurm"
           : s == inventory::DrainScheduler::kKubernetes ? "kubernetes" : "none";
  };
  std::string health;
  for (const auto& h : p.health) health += (health.empty() ? "" : " | ") + h;
  return {
      {"drain.scheduler", sched(p.scheduler)},
      {"drain.timeout", std::to_string(p.drain_timeout_s) + "s"},
      {"drain.scheduler_timeout", std::to_string(p.scheduler_timeout_s) + "s"},
      {"max_unavailable", std::to_string(p.max_unavailable_count) + (p.max_unavailable_is_percent ? "%" : "")},
      {"failure_domain.by", p.domain_by},
      {"failure_domain.mode", p.domain_mode == inventory::DomainMode::kAligned ? "aligned" : "spread"},
      {"failure_domain.at_once", std::to_string(p.domain_at_once)},
      {"canary", std::to_string(p.canary)},
      {"max_failures", std::to_string(p.max_failures)},
      {"health", health},
      {"health_timeout", std::to_string(p.health_timeout_s) + "s"},
      {"unhealthy", p.unhealthy == inventory::RolloutPolicy::Unhealthy::kChange ? "change" : "skip"},
      {"window.cron", p.window_cron},
      {"window.duration", std::to_string(p.window_duration_s) + "s"},
  };
}

// Which of the plan's recorded files differ at the commit applied (by their digest there).
std::string ChangedFiles(const std::vector<std::string>& files, const Plan& plan,
                         const inventory::FileSource* now) {
  std::string out;
  for (const std::string& f : files) {
    auto was = plan.desired_files.find(f);
    std::string is;
    if (now)
      if (auto text = now->Read(f); text.ok() && text->has_value()) is = "sha256:" + Sha256Hex(**text);
    const bool same = was != plan.desired_files.end() && was->second == is;
    if (!same) out += (out.empty() ? "" : ", ") + f;
  }
  return out;
}

}  // namespace

Diagnostics CheckDesiredUnchanged(const Plan& plan, const inventory::Cluster& cluster,
                                  const DesiredByNode& desired,
                                  const inventory::FileSource* files_now) {
  Diagnostics d;
  const std::string from = plan.source.commit.substr(0, 12);
  const std::string at = cluster.source.commit.substr(0, 12);
  // One diagnostic per (planned image, image now): a change to a stack names its nodes once.
  struct Differing {
    std::vector<std::string> nodes;
    std::vector<std::string> keys;
    std::string files;
  };
  std::map<std::pair<std::string, std::string>, Differing> differing;
  std::vector<std::string> missing, unrecorded;
  for (const NodePlan& n : plan.nodes) {
    auto it = desired.find(n.node);
    if (it == desired.end()) {
      missing.push_back(n.node);
      continue;
    }
    if (n.desired_digest.empty()) {
      unrecorded.push_back(n.node);
      continue;
    }
    const nlohmann::json image = DesiredImage(it->second, cluster);
    const std::string now = JsonDigest(image);
    if (now == n.desired_digest) continue;
    Differing& g = differing[{n.desired_digest, now}];
    if (g.nodes.empty()) {
      auto st = plan.desired_states.find(n.desired_digest);
      const nlohmann::json planned = st == plan.desired_states.end() ? nlohmann::json()
                                                                     : st->second.image;
      g.keys = ImageDifferences(planned, image);
      if (st != plan.desired_states.end() && files_now && !plan.desired_files.empty()) {
        std::vector<std::string> files = st->second.files;
        for (const std::string& f : DesiredFiles(it->second, cluster)) files.push_back(f);
        std::sort(files.begin(), files.end());
        files.erase(std::unique(files.begin(), files.end()), files.end());
        g.files = ChangedFiles(files, plan, files_now);
      }
    }
    g.nodes.push_back(n.node);
  }
  if (!unrecorded.empty())
    d.Add(PlanError("plan.commit-moved",
                    fmt::format("the plan was made at {} and records no desired state for {} (a "
                                "version 1 plan): it applies at its own commit only, not at {}",
                                from, inventory::CompressHostlist(unrecorded), at),
                    "nodes", "make a new plan at the commit to apply, or apply this one without --ref"));
  if (!missing.empty())
    d.Add(PlanError("plan.desired-changed",
                    fmt::format("{} planned at {} but not in commit {}",
                                inventory::CompressHostlist(missing), from, at),
                    "nodes"));
  for (const auto& [digests, g] : differing) {
    std::string keys;
    for (const std::string& k : g.keys) keys += "\n    " + k;
    d.Add(PlanError("plan.desired-changed",
                    fmt::format("{}: the desired state at {} differs from the plan's (made at {}){}"
                                "{}",
                                inventory::CompressHostlist(g.nodes), at, from,
                                g.files.empty() ? "" : "; changed: " + g.files, keys),
                    "",
                    "review and plan the commit to apply: plumb plan --ref " + at + " --out PLAN.json"));
  }
  return d;
}

Diagnostics CheckPlan(const Plan& plan) {
  Diagnostics d;
  std::map<std::string, int> in_batches;
  for (const Batch& b : plan.batches)
    for (const std::string& n : b.nodes) ++in_batches[n];
  std::set<std::string> planned;
  for (const NodePlan& n : plan.nodes) {
    planned.insert(n.node);
    if (n.actions.empty() && !n.return_to_service)
      d.Add(PlanError("plan.invalid", fmt::format("node {} is planned with no action", n.node),
                      "nodes"));
    if (n.skipped_unhealthy) {
      // Left as it is for a failed health check: in no batch, and the check is in the plan.
      const NodeFindings* h = plan.FindHealth(n.node);
      if (in_batches[n.node] != 0)
        d.Add(PlanError("plan.invalid",
                        fmt::format("node {} is skipped as unhealthy but is in {} batch(es)",
                                    n.node, in_batches[n.node]),
                        "batches"));
      if (!h || !h->Unhealthy())
        d.Add(PlanError("plan.invalid",
                        fmt::format("node {} is skipped as unhealthy, but the plan has no failed "
                                    "health check for it", n.node),
                        fmt::format("nodes.{}.skipped_unhealthy", n.node)));
    } else if (in_batches[n.node] != 1) {
      d.Add(PlanError("plan.invalid",
                      fmt::format("node {} is in {} batches (must be in exactly one)", n.node,
                                  in_batches[n.node]),
                      "batches"));
    }
  }
  for (const auto& [n, count] : in_batches)
    if (!planned.count(n))
      d.Add(PlanError("plan.invalid", fmt::format("batch node {} has no plan", n), "batches"));
  for (const UnreadableNode& u : plan.unreadable)
    if (planned.count(u.node))
      d.Add(PlanError("plan.invalid", fmt::format("node {} is both planned and unreadable", u.node),
                      "unreadable"));
  for (const NodePlan& n : plan.nodes) {
    if (n.desired_digest.empty()) continue;   // a version 1 plan
    auto st = plan.desired_states.find(n.desired_digest);
    if (st == plan.desired_states.end())
      d.Add(PlanError("plan.invalid",
                      fmt::format("node {}: its desired digest {} has no entry in the plan's "
                                  "desired states", n.node, n.desired_digest),
                      fmt::format("nodes.{}.desired_digest", n.node)));
  }
  for (const auto& [digest, st] : plan.desired_states)
    if (JsonDigest(st.image) != digest)
      d.Add(PlanError("plan.invalid",
                      fmt::format("the desired state recorded as {} hashes to {}", digest,
                                  JsonDigest(st.image)),
                      "desired.states"));
  if (!plan.unreadable.empty() && plan.complete)
    d.Add(PlanError("plan.invalid", "the plan has unreadable nodes but says it is complete",
                    "complete"));
  for (size_t i = 0; i < plan.batches.size(); ++i) {
    const Batch& b = plan.batches[i];
    if (b.index != static_cast<int>(i))
      d.Add(PlanError("plan.invalid", fmt::format("batch {} has index {}", i, b.index), "batches"));
    if (!plan.rollouts.count(b.rollout))
      d.Add(PlanError("plan.invalid", fmt::format("batch {} names rollout '{}', which the plan "
                                                  "does not carry", i + 1, b.rollout),
                      "batches"));
  }
  return d;
}

Diagnostics CheckPlanAgainstCommit(const Plan& plan, const inventory::Cluster& cluster,
                                   const DesiredByNode& desired,
                                   const std::map<std::string, modules::SchedulerNode>* live,
                                   const inventory::FileSource* files) {
  auto out_now = [&](const std::string& node) {
    if (!live) return false;
    auto it = live->find(node);
    return it != live->end() && it->second.Unavailable();
  };
  Diagnostics d;
  // The commit being applied: the plan's own, or (apply PLAN --ref main) the merge of it.
  const std::string& applied = cluster.source.commit.empty() ? plan.source.commit
                                                             : cluster.source.commit;
  const std::string at = applied.substr(0, 12);
  if (applied != plan.source.commit) {
    Diagnostics changed = CheckDesiredUnchanged(plan, cluster, desired, files);
    // What the nodes want differs there: that is the refusal, named by node, key and file; the
    // per-change checks below would only say the same again of each change.
    if (changed.HasErrors()) return changed;
    d.Append(changed);
  }
  if (plan.cluster != cluster.name)
    d.Add(PlanError("plan.authority",
                    fmt::format("the plan is for cluster '{}', commit {} says '{}'", plan.cluster,
                                at, cluster.name),
                    "cluster"));
  // 1. The rollout policies: the commit's, field by field.
  for (const auto& [name, p] : plan.rollouts) {
    auto it = cluster.rollouts.find(name);
    if (it == cluster.rollouts.end()) {
      d.Add(PlanError("plan.authority",
                      fmt::format("the plan's rollout policy '{}' is not in commit {}", name, at),
                      fmt::format("rollouts.{}", name)));
      continue;
    }
    auto mine = PolicyFields(p), theirs = PolicyFields(it->second);
    for (size_t i = 0; i < mine.size(); ++i)
      if (mine[i].second != theirs[i].second)
        d.Add(PlanError("plan.authority",
                        fmt::format("the plan's rollout '{}' says {} {} but commit {} says {}",
                                    name, mine[i].first, mine[i].second, at, theirs[i].second),
                        fmt::format("rollouts.{}.{}", name, mine[i].first)));
  }
  // 2. Each node's rollout and each change's desired value.
  std::map<std::string, int> scope_total;
  for (const auto& [name, nd] : desired) ++scope_total[nd.rollout];
  for (const NodePlan& n : plan.nodes) {
    auto it = desired.find(n.node);
    if (it == desired.end()) {
      d.Add(PlanError("plan.authority",
                      fmt::format("node {} is planned but commit {} has no such node", n.node, at),
                      "nodes"));
      continue;
    }
    if (it->second.rollout != n.rollout)
      d.Add(PlanError("plan.authority",
                      fmt::format("node {}: the plan rolls it with '{}', commit {} with '{}'",
                                  n.node, n.rollout, at, it->second.rollout),
                      fmt::format("nodes.{}.rollout", n.node)));
    for (const PlannedAction& pa : n.actions) {
      const modules::Action& a = pa.action;
      if (a.pointer.empty() || a.after.is_null()) continue;
      const nlohmann::json want = it->second.ValueAt(a.pointer);
      if (want.is_null()) continue;   // a module-level change; the node's re-probe checks it
      if (!Covers(want, a.after))
        d.Add(PlanError("plan.authority",
                        fmt::format("node {}: the plan sets {} to {} but commit {} says {}",
                                    n.node, ActionKey(a), ValueText(a.after), at, ValueText(want)),
                        fmt::format("nodes.{}.{}", n.node, ActionKey(a))));
    }
  }
  // 3. The health findings, as findings: each of a health check the node pins at the commit
  //    (thresholds may be compared only on the node, where apply judges them again). And the
  //    rollout's word on an unhealthy node: skipped exactly when its policy says skip. A version
  //    1 or 2 plan predates the choice: its nodes are batched, and apply judges them before it
  //    changes them (a failed check then skips the node as stale).
  for (const NodeFindings& h : plan.health) {
    auto it = desired.find(h.node);
    if (it == desired.end()) {
      d.Add(PlanError("plan.authority",
                      fmt::format("the plan reports health findings on {}, which commit {} does "
                                  "not have", h.node, at),
                      "health"));
      continue;
    }
    std::set<std::string> named;
    for (const Finding& f : h.findings) {
      if (!named.insert(f.check.module).second) continue;
      const nlohmann::json pin = it->second.ValueAt("/health/" + f.check.module);
      if (pin.is_object() && !pin.empty()) continue;
      d.Add(PlanError("plan.authority",
                      fmt::format("node {}: the plan reports a {} finding ({}), but commit {} pins "
                                  "no health.{} for it", h.node, f.check.module, f.check.id, at,
                                  f.check.module),
                      fmt::format("health.{}.{}", h.node, f.check.module)));
    }
  }
  if (plan.format_version >= 3) {
    for (const NodePlan& n : plan.nodes) {
      auto pit = cluster.rollouts.find(n.rollout);
      if (pit == cluster.rollouts.end()) continue;   // reported above
      const NodeFindings* h = plan.FindHealth(n.node);
      const bool skip = h && h->Unhealthy() &&
                        pit->second.unhealthy == inventory::RolloutPolicy::Unhealthy::kSkip;
      if (skip == n.skipped_unhealthy) continue;
      d.Add(PlanError("plan.authority",
                      skip ? fmt::format("node {} failed a health check and rollout '{}' says "
                                         "unhealthy: skip in commit {}, but the plan changes it",
                                         n.node, n.rollout, at)
                           : fmt::format("node {}: the plan skips it as unhealthy, but commit {} "
                                         "says {} (rollout '{}')", n.node, at,
                                         h && h->Unhealthy() ? "unhealthy: change"
                                                             : "it failed no health check",
                                         n.rollout),
                      fmt::format("nodes.{}.skipped_unhealthy", n.node)));
    }
  }
  // 4. Every batch within the commit's policy. Nodes the plan says were already out cost no
  //    budget here; apply counts them live from the scheduler before it admits any node.
  std::map<std::string, const NodePlan*> by_name;
  for (const NodePlan& n : plan.nodes) by_name[n.node] = &n;
  std::set<std::string> first_of_rollout;
  for (const Batch& b : plan.batches) {
    auto pit = cluster.rollouts.find(b.rollout);
    if (pit == cluster.rollouts.end()) continue;   // reported above
    const inventory::RolloutPolicy& policy = pit->second;
    const int limit = policy.MaxUnavailable(scope_total[b.rollout]);
    int costing = 0;
    std::map<std::string, int> per_domain;
    for (const std::string& name : b.nodes) {
      auto np = by_name.find(name);
      if (np == by_name.end()) continue;
      if (np->second->rollout != b.rollout)
        d.Add(PlanError("plan.authority",
                        fmt::format("batch {} (rollout '{}') holds {}, which rolls with '{}'",
                                    b.index + 1, b.rollout, name, np->second->rollout),
                        fmt::format("batches[{}].nodes", b.index)));
      if (!np->second->NeedsDrain() || (np->second->already_unavailable && out_now(name))) continue;
      ++costing;
      if (!policy.domain_by.empty()) {
        const inventory::Node* node = cluster.FindNode(name);
        ++per_domain[node ? node->Domain(policy.domain_by) : std::string()];
      }
    }
    const std::string key = fmt::format("batches[{}]", b.index);
    if (costing > limit)
      d.Add(PlanError("plan.authority",
                      fmt::format("batch {} takes {} node(s) out at once; commit {} allows "
                                  "max_unavailable {} (rollout '{}')",
                                  b.index + 1, costing, at, limit, b.rollout),
                      key + ".nodes"));
    if (b.budget > limit)
      d.Add(PlanError("plan.authority",
                      fmt::format("batch {} has budget {}; commit {} allows {}", b.index + 1,
                                  b.budget, at, limit),
                      key + ".budget"));
    if (first_of_rollout.insert(b.rollout).second && policy.canary > 0) {
      if (!b.canary)
        d.Add(PlanError("plan.authority",
                        fmt::format("rollout '{}' has canary {} in commit {}, but the plan's first "
                                    "batch of it is not a canary", b.rollout, policy.canary, at),
                        key + ".canary"));
      else if (costing > policy.canary)
        d.Add(PlanError("plan.authority",
                        fmt::format("the canary batch takes {} node(s) out; commit {} says "
                                    "canary {}", costing, at, policy.canary),
                        key + ".nodes"));
    }
    if (!policy.domain_by.empty()) {
      if (policy.domain_mode == inventory::DomainMode::kAligned &&
          static_cast<int>(per_domain.size()) > policy.domain_at_once)
        d.Add(PlanError("plan.authority",
                        fmt::format("batch {} disturbs {} {} domains at once; commit {} says at "
                                    "most {} (aligned)", b.index + 1, per_domain.size(),
                                    policy.domain_by, at, policy.domain_at_once),
                        key + ".domains"));
      if (policy.domain_mode == inventory::DomainMode::kSpread)
        for (const auto& [dom, count] : per_domain)
          if (count > policy.domain_at_once)
            d.Add(PlanError("plan.authority",
                            fmt::format("batch {} takes {} node(s) of {} '{}' out; commit {} says "
                                        "at most {} (spread)", b.index + 1, count,
                                        policy.domain_by, dom, at, policy.domain_at_once),
                            key + ".nodes"));
    }
  }
  return d;
}

Result<std::set<std::string>> SelectPlanNodes(const Plan& plan, const inventory::Cluster& cluster,
                                              std::string_view pattern) {
  if (!pattern.empty())
    if (auto none = LimitNamesNoNode(pattern)) return *none;
  const inventory::NodePattern p(pattern);
  std::vector<std::string> names;
  for (const NodePlan& n : plan.nodes) names.push_back(n.node);
  auto in_group = [&](std::string_view node, std::string_view group) {
    const inventory::Node* n = cluster.FindNode(std::string(node));
    if (!n) return false;
    // Direct membership or through parents, as --limit reads groups everywhere.
    std::vector<std::string> todo(n->groups.begin(), n->groups.end());
    std::set<std::string> seen;
    while (!todo.empty()) {
      std::string g = todo.back();
      todo.pop_back();
      if (g == group) return true;
      if (!seen.insert(g).second) continue;
      if (auto it = cluster.groups.find(g); it != cluster.groups.end())
        todo.insert(todo.end(), it->second.parents.begin(), it->second.parents.end());
    }
    return false;
  };
  for (const auto& t : p.terms()) {
    if (t.exclude) continue;
    bool any = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return inventory::NodePattern::TermMatches(t, n, in_group);
    });
    if (!any)
      return Diagnostic::Error(
          "limit.no-match",
          fmt::format("--limit: '{}' matches no node of the plan (the plan changes {})", t.text,
                      names.empty() ? std::string("no node") : inventory::CompressHostlist(names)),
          {}, {}, "name nodes the plan changes, or make a new plan that includes them");
  }
  std::set<std::string> out;
  for (const std::string& n : names)
    if (p.empty() || p.Matches(n, in_group)) out.insert(n);
  return out;
}

Plan LimitPlan(const Plan& plan, const std::set<std::string>& keep,
               const inventory::Cluster& cluster, const DesiredByNode& desired,
               const std::map<std::string, modules::SchedulerNode>& scheduler,
               std::vector<std::string>* left_out) {
  Plan out = plan;
  // Changed from what was read: written the current way (an older plan's JSON no longer says
  // what this one does).
  out.read_body = nullptr;
  out.format_version = kPlanFormatVersion;
  auto dropped = [&](const std::string& n) { return !keep.count(n); };
  if (left_out)
    for (const NodePlan& n : plan.nodes)
      if (dropped(n.node)) left_out->push_back(n.node);
  std::erase_if(out.nodes, [&](const NodePlan& n) { return dropped(n.node); });
  std::erase_if(out.waived, [&](const NodeWaived& w) { return dropped(w.node); });
  std::erase_if(out.blocking_jobs, [&](const BlockingJobs& b) { return dropped(b.node); });
  // The findings of the planned nodes left out go with them; those of nodes in sync stay.
  std::erase_if(out.health, [&](const NodeFindings& h) { return dropped(h.node) && plan.FindNode(h.node); });
  std::set<std::string> states_kept;
  for (const NodePlan& n : out.nodes) states_kept.insert(n.desired_digest);
  std::erase_if(out.desired_states, [&](const auto& kv) { return !states_kept.count(kv.first); });
  // The batches are formed again (same policies, the scheduler's view now): the plan's own
  // batches were cut for other nodes.
  Diagnostics kept;
  for (const Diagnostic& d : out.diags.items())
    if (d.code != "plan.unscheduled" && d.code != "plan.budget-exhausted") kept.Add(d);
  out.diags = std::move(kept);
  FormBatches(out, cluster, desired, scheduler);
  SealPlan(out);
  return out;
}

}  // namespace plumb::plans
