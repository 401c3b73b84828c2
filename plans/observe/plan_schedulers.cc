#include "plans/observe/plan_schedulers.h"

#include <fmt/format.h>

#include "inventory/hostlist.h"

namespace plumb::plans {
namespace {

const char* KindName(inventory::DrainScheduler s) {
  switch (s) {
    case inventory::DrainScheduler::kSlurm: return "slurm";
    case inventory::DrainScheduler::kKubernetes: return "kubernetes";
    case inventory::DrainScheduler::kNone: return "none";
  }
  return "none";
}

// The scheduler kind node `name`'s rollout policy drains through, or nullopt (not in the
// inventory, no policy).
std::optional<inventory::DrainScheduler> KindOf(const inventory::Cluster& cluster,
                                                const DesiredByNode& desired,
                                                const std::string& name) {
  auto nd = desired.find(name);
  if (nd == desired.end()) return std::nullopt;
  auto policy = cluster.rollouts.find(nd->second.rollout);
  if (policy == cluster.rollouts.end()) return std::nullopt;
  return policy->second.scheduler;
}

// Every node asked about, with the scheduler kind it drains through.
template <class Fn>
void ForEachAsked(const inventory::Cluster& cluster, const DesiredByNode& desired,
                  const std::vector<std::string>& nodes, Fn fn) {
  auto one = [&](const std::string& name) {
    if (auto kind = KindOf(cluster, desired, name)) fn(name, *kind);
  };
  if (nodes.empty())
    for (const auto& [name, nd] : desired) one(name);
  else
    for (const std::string& name : nodes) one(name);
}

Diagnostic ReadOnly(const char* what) {
  return Diagnostic::Error("plan.read-only",
                           fmt::format("{}: the plan's view of the schedulers only reads", what));
}

}  // namespace

ReadOnlySchedulers::ReadOnlySchedulers(const inventory::Cluster& cluster,
                                       const DesiredByNode& desired, Schedulers schedulers)
    : cluster_(cluster), desired_(desired), schedulers_(std::move(schedulers)) {}

Result<std::map<std::string, modules::SchedulerNode>> ReadOnlySchedulers::Query(
    const std::vector<std::string>& nodes) {
  // Each scheduler is asked only about its own nodes: a node of the Kubernetes pool that Slurm
  // also lists is judged by Kubernetes, and a policy no asked node uses is never read.
  std::map<inventory::DrainScheduler, std::vector<std::string>> asked;
  ForEachAsked(cluster_, desired_, nodes, [&](const std::string& name, inventory::DrainScheduler kind) {
    asked[kind].push_back(name);
  });
  std::map<std::string, modules::SchedulerNode> out;
  for (auto& [kind, names] : asked) {
    auto d = schedulers_.by_kind.find(kind);
    if (d == schedulers_.by_kind.end() || !d->second) continue;
    auto q = d->second->Query(names);
    if (!q) return q.error();
    const bool shows = d->second->ShowsStacks();
    for (const std::string& name : names)
      if (auto it = q->find(name); it != q->end()) {
        it->second.shows_stacks = shows;
        out.insert_or_assign(name, std::move(it->second));
      }
  }
  return out;
}

bool ReadOnlySchedulers::ShowsStacks() const {
  for (const auto& [kind, d] : schedulers_.by_kind)
    if (d && d->ShowsStacks()) return true;
  return false;
}

Result<std::vector<modules::StackRequest>> ReadOnlySchedulers::StackRequests() {
  std::vector<modules::StackRequest> out;
  for (const auto& [kind, d] : schedulers_.by_kind) {
    if (!d || !d->ShowsStacks()) continue;
    auto r = d->StackRequests();
    if (!r) return r.error();
    out.insert(out.end(), r->begin(), r->end());
  }
  return out;
}

Status ReadOnlySchedulers::SetStack(const modules::SchedulerNode&, const modules::StackTag&) {
  return ReadOnly("stack tag");
}

Status ReadOnlySchedulers::Drain(const std::string&, const std::string&) { return ReadOnly("drain"); }
Status ReadOnlySchedulers::Resume(const std::string&) { return ReadOnly("resume"); }
Status ReadOnlySchedulers::Evict(const std::string&) { return ReadOnly("evict"); }
Status ReadOnlySchedulers::SetClaim(const modules::SchedulerNode&, const modules::NodeClaim&) {
  return ReadOnly("claim");
}

std::optional<Diagnostic> NodesUnknownToScheduler(
    const inventory::Cluster& cluster, const DesiredByNode& desired,
    const std::vector<std::string>& nodes,
    const std::map<std::string, modules::SchedulerNode>& view) {
  std::map<inventory::DrainScheduler, std::vector<std::string>> unknown;
  ForEachAsked(cluster, desired, nodes, [&](const std::string& name, inventory::DrainScheduler kind) {
    if (kind != inventory::DrainScheduler::kNone && !view.count(name)) unknown[kind].push_back(name);
  });
  if (unknown.empty()) return std::nullopt;
  std::string which;
  size_t count = 0;
  std::string first;
  for (auto& [kind, names] : unknown) {
    which += fmt::format("{}{}: {}", which.empty() ? "" : "; ", KindName(kind),
                         inventory::CompressHostlist(names));
    count += names.size();
    if (first.empty() || names.front() < first) first = names.front();
  }
  const inventory::Node* at = cluster.FindNode(first);
  return Diagnostic::Warning(
      "plan.unknown-to-scheduler",
      fmt::format("{} node(s) are not known to the scheduler their rollout policy drains through "
                  "({}): apply would fail them at the drain",
                  count, which),
      at ? at->where : Location{}, {},
      "a node's inventory name must be the scheduler's own (Slurm's NodeName, the Kubernetes "
      "node name): rename it in inventory.yaml, or add it to the scheduler");
}

}  // namespace plumb::plans
