#pragma once
/// A change as the rows people read: one row per member of a map-valued key, each named, with
/// the reason a row that looks like no change is one. The plan (text, markdown), the drift
/// report (every format) and the watch's events show the same rows.
///
///   - An action on one member of a key that holds for several (an InfiniBand port, a RoCE
///     interface) names it in params "member" ("mlx5_0 port 1"): two ports off their pin are
///     two rows, each named, never one row for the key.
///   - An action whose values are maps (the BIOS attributes it sets) is one row per attribute
///     ("bios.SriovGlobalEnable").
///   - A row whose live and wanted values read the same ("550.90.07 -> 550.90.07": the loaded
///     driver is the pin, its package is missing or from another archive) says why: the
///     module's params "gaps" ("nvidia-driver-550 is not (fully) installed"), else its summary.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/module.h"

namespace plumb::plans::report {

/// The member an action is about (params "member": "mlx5_0 port 1", "eth2"), "" for the key as
/// a whole.
std::string MemberOf(const modules::Action& a);

/// Why a change is wanted when its values alone do not say: the params' "gaps" (what keeps the
/// pin from being installed), joined with "; "; else, when `before` and `after` read the same,
/// the action's summary; else "".
std::string WhyOf(const modules::Action& a);

struct ChangeRow {
  std::string key;        ///< "bios.SriovGlobalEnable", "fabric.infiniband.rate_gbps"
  std::string member;     ///< "mlx5_0 port 1", "" when none
  nlohmann::json before;  ///< live (null: absent)
  nlohmann::json after;   ///< wanted (null: removed)
  std::string why;        ///< WhyOf, "" when the values say it
};

/// The rows of one action: one, or one per member of a map-valued action.
std::vector<ChangeRow> RowsOf(const modules::Action& a);

/// "key [member]", or "key" when the row has no member.
std::string RowName(const std::string& key, const std::string& member);

}  // namespace plumb::plans::report
