#include "plans/report/drift.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "plans/report/hostlist.h"
#include "plans/report/keys.h"

namespace plumb::plans::report {
namespace {

// The part of `value` (found at `at`) that sits at `pointer` (below `at`), or null.
nlohmann::json Below(const nlohmann::json& value, const std::string& at, const std::string& pointer) {
  if (pointer.size() == at.size()) return value;
  try {
    nlohmann::json::json_pointer rel(pointer.substr(at.size()));
    if (value.is_object() && value.contains(rel)) return value.at(rel);
  } catch (const nlohmann::json::exception&) {
  }
  return nullptr;
}

void MarkDiffers(DriftCheck& c, const PlannedAction& pa) {
  c.status = CheckStatus::kDrift;
  c.observed = Below(pa.action.before, pa.action.pointer, c.pointer);
  if (c.pointer.size() < pa.action.pointer.size()) c.observed = nullptr;  // finer than the leaf
  c.summary = pa.action.summary;
  c.reason = pa.reason;
  c.disruption = pa.action.disruption;
  if (pa.origin.known()) c.origin = pa.origin;
  if (!pa.action.module.empty()) c.module = pa.action.module;
}

// Waivers with their host lists expanded once, not once per check.
struct PreparedWaiver {
  const inventory::Waiver* w;
  std::unordered_set<std::string> hosts;
  bool expired;
  bool used = false;
  std::shared_ptr<const WaiverRef> ref;   // made on first match, shared by every match
};

}  // namespace

const char* CheckStatusName(CheckStatus s) {
  switch (s) {
    case CheckStatus::kInSync: return "in_sync";
    case CheckStatus::kDrift: return "drift";
    case CheckStatus::kWaived: return "waived";
    case CheckStatus::kUnchecked: return "unchecked";
  }
  return "unchecked";
}

const char* DriftVerdictName(DriftVerdict v) {
  switch (v) {
    case DriftVerdict::kInSync: return "in_sync";
    case DriftVerdict::kDrift: return "drift";
    case DriftVerdict::kPartial: return "partial";
    case DriftVerdict::kError: return "error";
  }
  return "error";
}

int DriftNode::Count(CheckStatus s) const {
  return static_cast<int>(
      std::count_if(checks.begin(), checks.end(), [s](const DriftCheck& c) { return c.status == s; }));
}

bool WaiverCoversNode(const inventory::Waiver& w, const std::string& node) {
  if (GlobMatch(w.nodes, node)) return true;
  auto hosts = ExpandHostlist(w.nodes);
  return hosts && std::find(hosts->begin(), hosts->end(), node) != hosts->end();
}

DriftReport MakeDriftReport(const DriftInput& in) {
  const Plan& plan = *in.plan;
  DriftReport r;
  r.source = plan.source;
  r.cluster = plan.cluster;
  r.created_at = plan.created_at;
  r.diags.Append(plan.diags);

  std::vector<PreparedWaiver> waivers;
  if (in.cluster) {
    for (const inventory::Waiver& w : in.cluster->waivers) {
      PreparedWaiver pw{&w, {}, !w.expires.empty() && w.expires < in.today};
      if (auto hosts = ExpandHostlist(w.nodes)) pw.hosts.insert(hosts->begin(), hosts->end());
      waivers.push_back(std::move(pw));
    }
  }

  std::map<std::string, const NodePlan*> planned;
  for (const NodePlan& np : plan.nodes) planned[np.node] = &np;
  std::map<std::string, const UnreadableNode*> unreadable;
  for (const UnreadableNode& u : plan.unreadable) unreadable[u.node] = &u;
  std::unordered_set<std::string> in_sync(plan.in_sync.begin(), plan.in_sync.end());

  std::unordered_map<std::string_view, const inventory::Node*> inventory_nodes;
  if (in.cluster)
    for (const inventory::Node& n : in.cluster->nodes) inventory_nodes.emplace(n.name, &n);

  for (const auto& [name, nd] : *in.desired) {
    auto pit = planned.find(name);
    auto uit = unreadable.find(name);
    if (pit == planned.end() && uit == unreadable.end() && !in_sync.count(name))
      continue;   // not in this run (--limit)
    DriftNode dn;
    dn.node = name;
    if (auto it = inventory_nodes.find(name); it != inventory_nodes.end()) dn.rack = it->second->rack;
    if (uit != unreadable.end()) {
      dn.readable = false;
      dn.unreadable_reason = uit->second->reason;
      ++r.unreadable_nodes;
      r.nodes.push_back(std::move(dn));
      continue;
    }
    for (const std::string& p : LeafPointers(nd.desired)) {
      DriftCheck c;
      c.pointer = p;
      c.key = PointerToKey(p);
      c.module = ModuleForPointer(p);
      c.desired = nd.ValueAt(p);
      c.origin = nd.OriginOf(p);
      if (!in.modules_run.empty() && !in.modules_run.count(c.module))
        c.status = CheckStatus::kUnchecked;
      dn.checks.push_back(std::move(c));
    }
    if (pit != planned.end()) {
      const NodePlan& np = *pit->second;
      dn.marker_commit = np.marker_commit;
      for (const PlannedAction& pa : np.actions) {
        bool matched = false;
        for (DriftCheck& c : dn.checks) {
          const bool below = PointerUnder(c.pointer, pa.action.pointer);
          if (!below && !PointerUnder(pa.action.pointer, c.pointer)) continue;
          // An action on a whole map ("services.x") names several leaves; only those whose
          // live value differs have drifted.
          if (below && c.pointer.size() > pa.action.pointer.size() &&
              Below(pa.action.before, pa.action.pointer, c.pointer) == c.desired)
            continue;
          MarkDiffers(c, pa);
          matched = true;
        }
        if (!matched) {   // a change the desired leaves do not name (module-level action)
          DriftCheck c;
          c.pointer = pa.action.pointer;
          c.key = pa.action.key.empty() ? PointerToKey(pa.action.pointer) : pa.action.key;
          c.module = pa.action.module;
          c.desired = pa.action.after;
          MarkDiffers(c, pa);
          c.observed = pa.action.before;
          dn.checks.push_back(std::move(c));
        }
      }
    }
    for (DriftCheck& c : dn.checks) {
      if (c.status != CheckStatus::kDrift) continue;
      for (PreparedWaiver& pw : waivers) {
        const inventory::Waiver& w = *pw.w;
        if (!GlobMatch(w.keys, c.key)) continue;
        if (!pw.hosts.count(name) && !GlobMatch(w.nodes, name)) continue;
        if (!pw.ref)
          pw.ref = std::make_shared<const WaiverRef>(
              WaiverRef{w.nodes, w.keys, w.reason, w.owner, w.expires, w.where, pw.expired});
        c.waiver = pw.ref;
        pw.used = true;
        if (!pw.expired) {
          c.status = CheckStatus::kWaived;
          break;
        }
      }
    }
    r.checks += static_cast<int>(dn.checks.size());
    int drift = dn.Count(CheckStatus::kDrift);
    r.drift_keys += drift;
    r.waived_keys += dn.Count(CheckStatus::kWaived);
    if (drift > 0) ++r.drifted_nodes;
    r.nodes.push_back(std::move(dn));
  }

  for (const PreparedWaiver& pw : waivers) {
    if (!pw.expired) continue;
    const inventory::Waiver& w = *pw.w;
    r.diags.Add(Diagnostic::Warning(
        "drift.waiver-expired",
        fmt::format("waiver for nodes '{}' keys '{}' ({}, owner {}) expired on {}{}", w.nodes,
                    w.keys, w.reason, w.owner, w.expires,
                    pw.used ? "; the drift it covered counts again" : ""),
        w.where, "waivers", "renew it with a new expiry, fix the drift, or delete the waiver"));
  }

  if (r.drift_keys > 0) r.verdict = DriftVerdict::kDrift;
  else if (r.unreadable_nodes > 0) r.verdict = DriftVerdict::kPartial;
  else r.verdict = DriftVerdict::kInSync;
  return r;
}

int DriftExitCode(const DriftReport& report) {
  switch (report.verdict) {
    case DriftVerdict::kInSync: return 0;
    case DriftVerdict::kDrift: return 2;
    case DriftVerdict::kPartial: return 1;   // "in sync" cannot be vouched for: not 0, not 2
    case DriftVerdict::kError: return 1;
  }
  return 1;
}

}  // namespace plumb::plans::report
