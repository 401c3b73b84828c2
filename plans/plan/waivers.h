#pragma once
/// Waivers as every verb reads them: plan shows a waived difference and leaves it out of the
/// changes, apply never changes it (and verify does not expect it changed), drift reports it
/// as waived. A waiver covers (node, key) when its `nodes` pattern (inventory/node_pattern.h)
/// matches the node and its `keys` glob matches the key ("sysctl.*"). It is good through the
/// day of `expires`; an expired waiver waives nothing (the loader warns about it, once).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <functional>

#include "inventory/model.h"
#include "modules/module.h"
#include "inventory/node_pattern.h"

namespace plumb::plans {

class WaiverSet {
 public:
  /// `today` is YYYY-MM-DD (the first 10 characters of an RFC 3339 time).
  WaiverSet(const std::vector<inventory::Waiver>& waivers, std::string_view today);

  struct Match {
    const inventory::Waiver* waiver = nullptr;
    size_t index = 0;      ///< in the list given to the constructor
    bool expired = false;
  };
  /// The first unexpired waiver covering (node, key); else the first expired one (drift names
  /// it beside the drift it no longer excuses); `waiver` null when none covers it.
  Match Find(std::string_view node, std::string_view key) const;
  /// True when an unexpired waiver covers (node, key).
  bool Waives(std::string_view node, std::string_view key) const;
  size_t size() const { return entries_.size(); }
  bool Expired(size_t index) const { return entries_[index].expired; }

 private:
  struct Entry {
    const inventory::Waiver* waiver;
    inventory::NodePattern nodes;
    bool expired;
  };
  std::vector<Entry> entries_;
};

/// One difference a waiver keeps: the action (or the part of it) and the waiver.
struct WaivedPiece {
  modules::Action action;
  const inventory::Waiver* waiver = nullptr;   ///< null when the caller's test names none
};
/// `actions` split into what is applied and what waivers keep. An action is waived whole when
/// its key is; an action on a map (BIOS attributes: key "bios", after {"SriovGlobalEnable":
/// ...}) loses the members whose own key ("bios.SriovGlobalEnable") is waived, keeps the rest
/// (its summary says which were left out), and is waived whole when all are. `waived(key)`
/// returns the waiver covering a key, or null.
struct WaiverSplit {
  std::vector<modules::Action> kept;
  std::vector<WaivedPiece> waived;
};
WaiverSplit SplitWaived(std::vector<modules::Action> actions,
                        const std::function<const inventory::Waiver*(const std::string& key)>& waived);

/// Is `today` (YYYY-MM-DD) past the waiver's last day?
bool WaiverExpired(const inventory::Waiver& w, std::string_view today);

}  // namespace plumb::plans
