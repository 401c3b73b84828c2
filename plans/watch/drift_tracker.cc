#include "plans/watch/drift_tracker.h"

#include <algorithm>
#include <unordered_map>

namespace plumb::plans::watch {
namespace {

using report::DriftStatus;
using report::DriftCheck;

WatchEvent Base(EventKind kind, const std::string& node, const DriftTracker::Context& cx) {
  WatchEvent e;
  e.kind = kind;
  e.time = cx.time;
  e.cluster = cx.cluster;
  e.node = node;
  e.commit = cx.commit;
  return e;
}

WatchEvent DriftEvent(const std::string& node, const DriftCheck& c, const DriftTracker::Context& cx) {
  WatchEvent e = Base(EventKind::kDrift, node, cx);
  e.key = c.key();
  e.member = c.member;
  e.live = c.observed;
  e.desired = c.desired();
  e.reason = plans::ChangeReasonName(c.reason);
  e.why = c.why;
  e.origin = c.origin().ToString();
  return e;
}

// A row's identity across verdicts: its key, and its member when a key has several (ports).
std::string RowId(const DriftCheck& c) { return c.member.empty() ? c.key() : c.key() + "\n" + c.member; }

const char* ClearedReason(DriftStatus s) {
  switch (s) {
    case DriftStatus::kInSync: return "in_sync";
    case DriftStatus::kWaived: return "waived";
    case DriftStatus::kUnchecked: return "unchecked";
    case DriftStatus::kDrift: break;
  }
  return "in_sync";
}

// Events for the keys of one node going from `before` to `after` (both readable verdicts).
void CompareChecks(const std::string& node, const std::vector<DriftCheck>& before,
                   const std::vector<DriftCheck>& after, const DriftTracker::Context& cx,
                   std::vector<WatchEvent>& out) {
  std::unordered_map<std::string, const DriftCheck*> was;
  for (const DriftCheck& c : before) was.emplace(RowId(c), &c);
  for (const DriftCheck& c : after) {
    auto it = was.find(RowId(c));
    const DriftCheck* old = it == was.end() ? nullptr : it->second;
    if (old != nullptr) was.erase(it);
    const bool drifted_before = old != nullptr && old->status == DriftStatus::kDrift;
    if (c.status == DriftStatus::kDrift) {
      if (!drifted_before || old->observed != c.observed || old->desired() != c.desired() ||
          old->why != c.why)
        out.push_back(DriftEvent(node, c, cx));
    } else if (drifted_before) {
      WatchEvent e = Base(EventKind::kDriftCleared, node, cx);
      e.key = c.key();
      e.member = c.member;
      e.live = c.status == DriftStatus::kInSync ? c.desired() : c.observed;
      e.desired = c.desired();
      e.reason = ClearedReason(c.status);
      e.origin = c.origin().ToString();
      out.push_back(std::move(e));
    }
  }
  // Rows gone: a member of a key still pinned is back on its pin (its key's row now names
  // another member, or none); a key no longer pinned (a new commit removed it) is over.
  std::unordered_map<std::string_view, const DriftCheck*> keys_now;
  for (const DriftCheck& c : after) keys_now.emplace(c.key(), &c);
  for (const DriftCheck& c : before) {
    if (c.status != DriftStatus::kDrift || !was.count(RowId(c))) continue;
    WatchEvent e = Base(EventKind::kDriftCleared, node, cx);
    e.key = c.key();
    e.member = c.member;
    if (auto k = keys_now.find(c.key()); k != keys_now.end()) {
      e.live = k->second->desired();
      e.desired = k->second->desired();
      e.reason = "in_sync";
      e.origin = k->second->origin().ToString();
    } else {
      e.live = c.observed;
      e.reason = "unpinned";
    }
    out.push_back(std::move(e));
  }
}

}  // namespace

report::DriftNode* DriftTracker::Slot(const std::string& node) {
  auto& nodes = report_.nodes;
  auto it = std::lower_bound(nodes.begin(), nodes.end(), node,
                             [](const report::DriftNode& n, const std::string& k) { return n.node < k; });
  return it != nodes.end() && it->node == node ? &*it : nullptr;
}

const report::DriftNode* DriftTracker::Find(const std::string& node) const {
  return const_cast<DriftTracker*>(this)->Slot(node);
}

std::vector<WatchEvent> DriftTracker::Update(report::DriftNode verdict, const Context& cx) {
  std::vector<WatchEvent> out;
  const std::string node = verdict.node;
  report::DriftNode* had = Slot(node);
  if (had == nullptr) {   // a node seen for the first time: its place in name order
    auto& nodes = report_.nodes;
    auto at = std::lower_bound(nodes.begin(), nodes.end(), node,
                               [](const report::DriftNode& n, const std::string& k) { return n.node < k; });
    report::DriftNode empty;
    empty.node = node;
    had = &*nodes.insert(at, std::move(empty));
    if (!verdict.readable) {
      WatchEvent e = Base(EventKind::kNodeUnreadable, node, cx);
      e.reason = verdict.unreadable_reason;
      out.push_back(std::move(e));
    } else {
      CompareChecks(node, {}, verdict.checks, cx, out);
    }
    *had = std::move(verdict);
    return out;
  }
  if (!verdict.readable) {
    if (had->readable || had->unreadable_reason != verdict.unreadable_reason) {
      WatchEvent e = Base(EventKind::kNodeUnreadable, node, cx);
      e.reason = verdict.unreadable_reason;
      out.push_back(std::move(e));
    }
    if (had->readable) last_known_[node] = std::move(had->checks);
    *had = std::move(verdict);
    return out;
  }
  std::vector<DriftCheck> before;
  if (had->readable) {
    before = std::move(had->checks);
  } else {
    out.push_back(Base(EventKind::kNodeReadable, node, cx));
    if (auto k = last_known_.find(node); k != last_known_.end()) {
      before = std::move(k->second);
      last_known_.erase(k);
    }
  }
  CompareChecks(node, before, verdict.checks, cx, out);
  *had = std::move(verdict);
  return out;
}

void DriftTracker::Forget(const std::string& node) {
  auto& nodes = report_.nodes;
  nodes.erase(std::remove_if(nodes.begin(), nodes.end(),
                             [&](const report::DriftNode& n) { return n.node == node; }),
              nodes.end());
  last_known_.erase(node);
}

report::DriftReport& DriftTracker::Report() {
  report::Recount(report_);
  return report_;
}

}  // namespace plumb::plans::watch
