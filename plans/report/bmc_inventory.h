#pragma once
/// `plumb bmc inventory`'s output from what GatherBmc read: one summary line per node (power,
/// firmware, BIOS; or why its BMC was unreachable) with each distinct read error under it, the
/// count line, and the plumb.bmc-inventory/v1 document (--format json, --out). Tested in
/// tests/plans/report/bmc_inventory_test.cc.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/module.h"
#include "plans/observe/bmc_gather.h"

namespace plumb::plans::report {

/// "gpu001       bios 12 attributes (1 pending) firmware 3 components power On health OK": each
/// module of `mods` read says its part (Module::BmcSummary); "bios: error CODE" for one not
/// read; or "gpu001       unreachable [code]: message" (and its hint on a line of its own).
std::string BmcSummaryLine(const BmcObservation& o, const std::vector<const modules::Module*>& mods);

/// Some BMC or some module of one could not be read.
bool BmcInventoryPartial(const std::vector<BmcObservation>& obs);

/// {"format": "plumb.bmc-inventory/v1", "nodes": [...]}.
nlohmann::json BmcInventoryJson(const std::vector<BmcObservation>& obs);

/// The text: each node's summary line and its distinct read errors ("  error: ..."), then
/// "N BMCs, all read" (or "some unreadable").
std::string BmcInventoryText(const std::vector<BmcObservation>& obs,
                             const std::vector<const modules::Module*>& mods);

}  // namespace plumb::plans::report
