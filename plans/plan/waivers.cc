#include "plans/plan/waivers.h"

#include <fnmatch.h>

#include <fmt/format.h>

#include "plans/plan/keys.h"

namespace plumb::plans {

bool WaiverExpired(const inventory::Waiver& w, std::string_view today) {
  // YYYY-MM-DD strings compare like the dates they spell.
  return !w.expires.empty() && w.expires < today;
}

WaiverSet::WaiverSet(const std::vector<inventory::Waiver>& waivers, std::string_view today) {
  entries_.reserve(waivers.size());
  for (const inventory::Waiver& w : waivers)
    entries_.push_back({&w, inventory::NodePattern(w.nodes), WaiverExpired(w, today)});
}

WaiverSet::Match WaiverSet::Find(std::string_view node, std::string_view key) const {
  Match expired;
  const std::string k(key);
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    if (fnmatch(e.waiver->keys.c_str(), k.c_str(), 0) != 0) continue;
    if (!e.nodes.Matches(node)) continue;
    if (!e.expired) return {e.waiver, i, false};
    if (!expired.waiver) expired = {e.waiver, i, true};
  }
  return expired;
}

WaiverSplit SplitWaived(std::vector<modules::Action> actions,
                        const std::function<const inventory::Waiver*(const std::string& key)>& waived) {
  WaiverSplit out;
  for (modules::Action& a : actions) {
    const std::string key = a.key.empty() ? schemas::PointerToKey(a.pointer) : a.key;
    if (const inventory::Waiver* w = waived(key)) {
      out.waived.push_back({std::move(a), w});
      continue;
    }
    if (!a.after.is_object() || a.after.empty()) {
      out.kept.push_back(std::move(a));
      continue;
    }
    // A map: its members one by one.
    std::vector<std::string> left_out;
    modules::Action rest = a;
    for (auto it = a.after.begin(); it != a.after.end(); ++it) {
      const std::string member_key = key + "." + it.key();
      const inventory::Waiver* w = waived(member_key);
      if (!w) continue;
      modules::Action piece = a;
      piece.pointer = schemas::PointerAppend(a.pointer, it.key());
      piece.key = member_key;
      piece.after = it.value();
      piece.before = a.before.is_object() && a.before.contains(it.key()) ? a.before[it.key()]
                                                                          : nlohmann::json();
      piece.summary = fmt::format("set {} to {}", member_key, piece.after.dump());
      out.waived.push_back({std::move(piece), w});
      rest.after.erase(it.key());
      if (rest.before.is_object()) rest.before.erase(it.key());
      left_out.push_back(it.key());
    }
    if (left_out.empty()) {
      out.kept.push_back(std::move(a));
    } else if (!rest.after.empty()) {
      rest.summary += fmt::format(" (waived, left as they are: {})", fmt::join(left_out, ", "));
      out.kept.push_back(std::move(rest));
    }
  }
  return out;
}

bool WaiverSet::Waives(std::string_view node, std::string_view key) const {
  const Match m = Find(node, key);
  return m.waiver && !m.expired;
}

}  // namespace plumb::plans
