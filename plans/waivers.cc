#include "plans/waivers.h"

#include <fnmatch.h>

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

bool WaiverSet::Waives(std::string_view node, std::string_view key) const {
  const Match m = Find(node, key);
  return m.waiver && !m.expired;
}

}  // namespace plumb::plans
