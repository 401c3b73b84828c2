#include "modules/firmware/inventory.h"

#include <set>

#include "modules/bmc_util.h"
#include "modules/transport/system_select.h"

namespace plumb::modules::firmware {
namespace {

using nlohmann::json;

SystemRef RefOf(const std::string& link, const json& system) {
  SystemRef r{link, transport::LastSegment(link), {}};
  const json& chassis = system.is_object() ? system.value("Links", json::object()).value("Chassis", json::array())
                                           : json::array();
  for (const auto& c : chassis) {
    if (c.is_object() && c.contains("@odata.id") && c["@odata.id"].is_string()) {
      r.chassis.push_back(c["@odata.id"].get<std::string>());
    }
  }
  return r;
}

}  // namespace

Result<std::vector<InventoryItem>> ReadInventory(transport::Bmc& bmc, const json& us) {
  std::vector<InventoryItem> items;
  std::set<std::string> seen;
  bool any = false;
  for (const char* coll : {"FirmwareInventory", "SoftwareInventory"}) {
    std::string link = LinkOf(us, coll);
    if (link.empty()) continue;
    any = true;
    auto members = bmc.GetCollection(link);
    if (!members.ok()) return members.error();
    for (auto& m : members.value()) {
      std::string id = m.is_object() ? m.value("@odata.id", "") : "";
      if (!id.empty() && !seen.insert(id).second) continue;
      items.push_back({std::move(m), coll});
    }
  }
  if (!any) {
    return Diagnostic::Error("probe.firmware",
                             bmc.Name() + ": UpdateService has neither FirmwareInventory nor SoftwareInventory");
  }
  return items;
}

Result<std::optional<SystemsView>> ReadSystemsView(transport::Bmc& bmc) {
  auto links = bmc.SystemLinks();
  if (!links.ok()) return links.error();
  if (links.value().empty()) return std::optional<SystemsView>();
  if (links.value().size() == 1) {
    // Nothing to scope, but an HPE Cray EX blade with one node still prefixes its items with
    // the system's Id ("Node0.BIOS"): its short names must work as on a blade with two.
    const std::string& link = links.value()[0];
    return std::optional<SystemsView>(SystemsView{{link, transport::LastSegment(link), {}}, {}});
  }
  auto own = bmc.SystemLink();
  if (!own.ok()) return own.error();
  auto systems = bmc.GetMany(links.value());
  SystemsView view;
  for (size_t i = 0; i < links.value().size(); ++i) {
    const std::string& link = links.value()[i];
    if (!systems[i].ok()) return systems[i].error();
    SystemRef ref = RefOf(link, systems[i].value());
    if (link == own.value()) {
      view.own = std::move(ref);
    } else {
      view.others.push_back(std::move(ref));
    }
  }
  return std::optional<SystemsView>(std::move(view));
}

}  // namespace plumb::modules::firmware
