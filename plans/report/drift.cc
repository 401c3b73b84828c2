#include "plans/report/drift.h"

#include "schemas/exit_codes.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "plans/core/parallel.h"
#include "inventory/hostlist.h"
#include "modules/registry.h"
#include "plans/plan/keys.h"
#include "plans/plan/waivers.h"
#include "plans/report/rows.h"

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
  c.status = DriftStatus::kDrift;
  c.observed = Below(pa.action.before, pa.action.pointer, c.pointer());
  if (c.pointer().size() < pa.action.pointer.size()) c.observed = nullptr;  // finer than the leaf
  c.summary = pa.action.summary;
  c.member = MemberOf(pa.action);
  c.why = WhyOf(pa.action);
  c.reason = pa.reason;
  c.disruption = pa.action.disruption;
  // The action may know better where the pin is written, or which module owns it: this check
  // then gets a subject of its own (the shared one stays as the other nodes see it).
  const Location& had = c.origin();
  const bool new_origin = pa.origin.known() && (pa.origin.file != had.file ||
                                                pa.origin.line != had.line ||
                                                pa.origin.column != had.column);
  const bool new_module = !pa.action.module.empty() && pa.action.module != c.module();
  if (new_origin || new_module) {
    auto own = std::make_shared<CheckSubject>(*c.subject);
    if (new_origin) own->origin = pa.origin;
    if (new_module) own->module = pa.action.module;
    c.subject = std::move(own);
  }
}

// Each waiver's ref, shared by every check it matches.
struct PreparedWaiver {
  const inventory::Waiver* w;
  bool expired;
  std::shared_ptr<const WaiverRef> ref;
};

// Everything a node's checks are built from, read-only while nodes are checked in parallel.
struct Context {
  const DriftInput& in;
  std::vector<PreparedWaiver> waivers;
  std::unique_ptr<WaiverSet> waiver_set;   // matching (host lists, globs), same as the planner's
  std::unordered_map<std::string_view, const NodePlan*> planned;
  std::unordered_map<std::string_view, const NodeWaived*> waived;
  std::unordered_map<std::string_view, const std::string*> markers;
  std::unordered_map<std::string_view, const UnreadableNode*> unreadable;
  std::unordered_map<std::string_view, const NodeFindings*> health;
  std::unordered_set<std::string_view> in_sync;
  std::unordered_map<std::string_view, const inventory::Node*> inventory_nodes;
  /// The checks of each shared desired state before any facts: one per leaf, in sync (or
  /// unchecked when no module of the run owns it). Keyed by the shared state's identity.
  std::map<std::pair<const void*, const void*>, std::vector<DriftCheck>> templates;
};

std::vector<DriftCheck> TemplateFor(const DriftInput& in, const inventory::NodeDesired& nd) {
  std::vector<DriftCheck> out;
  for (std::string& p : LeafPointers(*nd.desired)) {
    auto subject = std::make_shared<CheckSubject>();
    subject->key = schemas::PointerToKey(p);
    const modules::Module* owner = in.registry->OwnerOf(p);   // null: no module checks it
    // An on-demand check's thresholds (health.dcgm, health.nccl_bw) are judged by a health run,
    // not by a gather: no check at all here rather than "unchecked" on every node.
    if (owner && owner->Info().on_demand && !in.modules_run.count(std::string(owner->Name()))) continue;
    subject->module = owner ? std::string(owner->Name()) : std::string();
    subject->desired = nd.ValueAt(p);
    subject->origin = nd.OriginOf(p);
    subject->pointer = std::move(p);
    DriftCheck c;
    if (!in.modules_run.empty() && !in.modules_run.count(subject->module))
      c.status = DriftStatus::kUnchecked;
    c.subject = std::move(subject);
    out.push_back(std::move(c));
  }
  return out;
}

// One chunk's share of the report: its nodes, in order, and its counts.
struct Partial {
  std::vector<DriftNode> nodes;
  std::vector<char> waiver_used;
  int drifted_nodes = 0, drift_keys = 0, waived_keys = 0, unreadable_nodes = 0, checks = 0;
  int unhealthy_nodes = 0, findings = 0;
};

// Marks the checks `pa` changes as differing (waived under `waiver` when given), or adds a
// check of its own when no desired leaf names it (a module-level action).
void MarkAction(DriftNode& dn, const PlannedAction& pa, const std::shared_ptr<const WaiverRef>& waiver) {
  auto mark = [&](DriftCheck& c) {
    MarkDiffers(c, pa);
    if (waiver) {
      c.status = DriftStatus::kWaived;
      c.waiver = waiver;
    }
  };
  bool matched = false;
  // One pin that holds for several members (every InfiniBand port, every RoCE interface): a
  // member another action already marked keeps its row, and this member gets one of its own.
  const std::string member = MemberOf(pa.action);
  std::map<std::string, std::shared_ptr<const CheckSubject>> other_members;   // key -> its subject
  std::set<std::string> marked;
  for (DriftCheck& c : dn.checks) {
    const bool below = schemas::PointerUnder(c.pointer(), pa.action.pointer);
    if (!below && !schemas::PointerUnder(pa.action.pointer, c.pointer())) continue;
    // An action on a whole map ("services.x") names several leaves; only those whose
    // live value differs have drifted.
    if (below && c.pointer().size() > pa.action.pointer.size() &&
        Below(pa.action.before, pa.action.pointer, c.pointer()) == c.desired())
      continue;
    matched = true;
    if (!member.empty() && c.Differs() && !c.member.empty() && c.member != member) {
      other_members.emplace(c.key(), c.subject);   // this member's row is another one
      continue;
    }
    mark(c);
    marked.insert(c.key());
  }
  // A key whose rows all name other members: one new row for this member, after the key's last
  // row, so a key's members stay together in the order they came.
  for (const auto& [key, subject] : other_members) {
    if (marked.count(key)) continue;
    DriftCheck row;
    row.subject = subject;
    mark(row);
    auto last = std::find_if(dn.checks.rbegin(), dn.checks.rend(),
                             [&key = key](const DriftCheck& c) { return c.key() == key; });
    dn.checks.insert(last.base(), std::move(row));
  }
  if (!matched) {   // a change the desired leaves do not name (module-level action)
    auto subject = std::make_shared<CheckSubject>();
    subject->pointer = pa.action.pointer;
    subject->key = pa.action.key.empty() ? schemas::PointerToKey(pa.action.pointer) : pa.action.key;
    subject->module = pa.action.module;
    subject->desired = pa.action.after;
    DriftCheck c;
    c.subject = std::move(subject);
    mark(c);
    c.observed = pa.action.before;
    dn.checks.push_back(std::move(c));
  }
}

void CheckNode(const Context& cx, const std::string& name, const inventory::NodeDesired& nd,
               Partial& out) {
  auto pit = cx.planned.find(name);
  auto uit = cx.unreadable.find(name);
  if (pit == cx.planned.end() && uit == cx.unreadable.end() && !cx.in_sync.count(name))
    return;   // not in this run (--limit)
  DriftNode dn;
  dn.node = name;
  if (auto it = cx.inventory_nodes.find(name); it != cx.inventory_nodes.end())
    dn.rack = it->second->rack;
  if (uit != cx.unreadable.end()) {
    dn.readable = false;
    dn.unreadable_reason = uit->second->reason;
    ++out.unreadable_nodes;
    out.nodes.push_back(std::move(dn));
    return;
  }
  dn.checks = cx.templates.at({nd.desired.Id(), nd.origins.Id()});
  if (auto hit = cx.health.find(name); hit != cx.health.end()) dn.findings = hit->second->findings;
  if (pit != cx.planned.end()) {
    const NodePlan& np = *pit->second;
    dn.marker_commit = np.marker_commit;
    for (const PlannedAction& pa : np.actions) MarkAction(dn, pa, nullptr);
  }
  if (auto wit = cx.waived.find(name); wit != cx.waived.end()) {
    // The planner set these aside under an unexpired waiver: they differ, and are waived.
    for (const WaivedChange& wc : wit->second->changes) {
      auto ref = std::make_shared<const WaiverRef>(
          WaiverRef{wc.nodes, wc.keys, wc.reason, wc.owner, wc.expires, wc.where, false});
      MarkAction(dn, wc.change, std::move(ref));
    }
  }
  if (auto mit = cx.markers.find(name); mit != cx.markers.end()) dn.marker_commit = *mit->second;
  for (DriftCheck& c : dn.checks) {
    if (c.status != DriftStatus::kDrift || !cx.waiver_set) continue;
    // An unexpired waiver was applied by the planner; what matches here has expired, and the
    // report names it beside the drift it no longer excuses.
    WaiverSet::Match m = cx.waiver_set->Find(name, c.key());
    if (!m.waiver) continue;
    c.waiver = cx.waivers[m.index].ref;
    out.waiver_used[m.index] = 1;
    if (!m.expired) c.status = DriftStatus::kWaived;
  }
  out.checks += static_cast<int>(dn.checks.size());
  out.findings += static_cast<int>(dn.findings.size());
  if (dn.Unhealthy()) ++out.unhealthy_nodes;
  int drift = dn.Count(DriftStatus::kDrift);
  out.drift_keys += drift;
  out.waived_keys += dn.Count(DriftStatus::kWaived);
  if (drift > 0) ++out.drifted_nodes;
  out.nodes.push_back(std::move(dn));
}

}  // namespace

const char* DriftStatusName(DriftStatus s) {
  switch (s) {
    case DriftStatus::kInSync: return "in_sync";
    case DriftStatus::kDrift: return "drift";
    case DriftStatus::kWaived: return "waived";
    case DriftStatus::kUnchecked: return "unchecked";
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

bool DriftNode::Unhealthy() const {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) {
    return f.check.status == modules::CheckStatus::kFail;
  });
}

int DriftNode::Count(DriftStatus s) const {
  return static_cast<int>(
      std::count_if(checks.begin(), checks.end(), [s](const DriftCheck& c) { return c.status == s; }));
}

bool WaiverCoversNode(const inventory::Waiver& w, const std::string& node) {
  return inventory::NodePattern(w.nodes).Matches(node);
}

DriftReport MakeDriftReport(const DriftInput& in) {
  const Plan& plan = *in.plan;
  DriftReport r;
  r.source = plan.source;
  r.cluster = plan.cluster;
  r.created_at = plan.created_at;
  r.gathered_at = plan.gathered_at;
  r.diags.Append(plan.diags);

  Context cx{in, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  if (in.cluster) {
    for (const inventory::Waiver& w : in.cluster->waivers) {
      const bool expired = WaiverExpired(w, in.today);
      cx.waivers.push_back({&w, expired,
                            std::make_shared<const WaiverRef>(WaiverRef{
                                w.nodes, w.keys, w.reason, w.owner, w.expires, w.where, expired})});
    }
    cx.waiver_set = std::make_unique<WaiverSet>(in.cluster->waivers, in.today);
    for (const inventory::Node& n : in.cluster->nodes) cx.inventory_nodes.emplace(n.name, &n);
  }
  for (const NodeWaived& w : plan.waived) cx.waived.emplace(w.node, &w);
  for (const auto& [node, commit] : plan.markers) cx.markers.emplace(node, &commit);
  for (const NodePlan& np : plan.nodes) cx.planned.emplace(np.node, &np);
  for (const UnreadableNode& u : plan.unreadable) cx.unreadable.emplace(u.node, &u);
  for (const NodeFindings& h : plan.health) cx.health.emplace(h.node, &h);
  cx.in_sync.insert(plan.in_sync.begin(), plan.in_sync.end());

  std::vector<std::pair<const std::string*, const inventory::NodeDesired*>> nodes;
  nodes.reserve(in.desired->size());
  for (const auto& [name, nd] : *in.desired) {
    nodes.emplace_back(&name, &nd);
    auto [it, fresh] = cx.templates.try_emplace({nd.desired.Id(), nd.origins.Id()});
    if (fresh) it->second = TemplateFor(in, nd);
  }

  // Nodes are independent: check them in ranges on all cores, then join the ranges in order.
  std::vector<Partial> parts(RangeCount(nodes.size(), 1024));
  ForEachRange(nodes.size(), 1024, [&](size_t begin, size_t end, size_t chunk) {
    Partial& part = parts[chunk];
    part.waiver_used.assign(cx.waivers.size(), 0);
    for (size_t i = begin; i < end; ++i) CheckNode(cx, *nodes[i].first, *nodes[i].second, part);
  });

  std::vector<char> used(cx.waivers.size(), 0);
  r.nodes.reserve(nodes.size());
  for (Partial& part : parts) {
    for (DriftNode& dn : part.nodes) r.nodes.push_back(std::move(dn));
    for (size_t i = 0; i < used.size(); ++i) used[i] |= part.waiver_used[i];
    r.drifted_nodes += part.drifted_nodes;
    r.drift_keys += part.drift_keys;
    r.waived_keys += part.waived_keys;
    r.unreadable_nodes += part.unreadable_nodes;
    r.checks += part.checks;
    r.unhealthy_nodes += part.unhealthy_nodes;
    r.findings += part.findings;
  }

  for (size_t i = 0; i < cx.waivers.size(); ++i) {
    const PreparedWaiver& pw = cx.waivers[i];
    if (!pw.expired) continue;
    const inventory::Waiver& w = *pw.w;
    r.diags.Add(Diagnostic::Warning(
        "drift.waiver-expired",
        fmt::format("waiver for nodes '{}' keys '{}' ({}, owner {}) expired on {}{}", w.nodes,
                    w.keys, w.reason, w.owner, w.expires,
                    used[i] ? "; the drift it covered counts again" : ""),
        w.where, "waivers", "renew it with a new expiry, fix the drift, or delete the waiver"));
  }

  r.verdict = VerdictFor(r.drift_keys, r.unreadable_nodes);
  return r;
}

DriftVerdict VerdictFor(int drift_keys, int unreadable_nodes) {
  if (drift_keys > 0) return DriftVerdict::kDrift;
  if (unreadable_nodes > 0) return DriftVerdict::kPartial;
  return DriftVerdict::kInSync;
}

void Recount(DriftReport& r) {
  r.drifted_nodes = r.drift_keys = r.waived_keys = r.unreadable_nodes = r.checks = 0;
  r.unhealthy_nodes = r.findings = 0;
  for (const DriftNode& n : r.nodes) {
    if (!n.readable) {
      ++r.unreadable_nodes;
      continue;
    }
    r.findings += static_cast<int>(n.findings.size());
    r.unhealthy_nodes += n.Unhealthy() ? 1 : 0;
    const int drift = n.Count(DriftStatus::kDrift);
    r.checks += static_cast<int>(n.checks.size());
    r.drift_keys += drift;
    r.waived_keys += n.Count(DriftStatus::kWaived);
    if (drift > 0) ++r.drifted_nodes;
  }
  r.verdict = VerdictFor(r.drift_keys, r.unreadable_nodes);
}

Outcome DriftOutcome(const DriftReport& report) {
  switch (report.verdict) {
    case DriftVerdict::kInSync: return Outcome::kInSync;
    case DriftVerdict::kDrift: return Outcome::kDrift;
    case DriftVerdict::kPartial: return Outcome::kNoVerdict;   // "in sync" cannot be vouched for
    case DriftVerdict::kError: return Outcome::kError;
  }
  return Outcome::kError;
}

int DriftExitCode(const DriftReport& report) { return ExitCodeFor("drift", DriftOutcome(report)); }

}  // namespace plumb::plans::report
