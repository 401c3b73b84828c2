#pragma once
/// Which firmware items belong to a node on a BMC that manages several systems (pure).
///
/// An HPE Cray EX blade's BMC manages Systems/Node0 and Systems/Node1 and lists both nodes'
/// firmware in one FirmwareInventory, so a pin by name must target only the node's own devices.
/// An item belongs to a system by what the data says, in this order:
///   1. RelatedItem links: into the node's system or one of its chassis (the system's
///      Links.Chassis) -> the node's; into another system or its chassis -> not the node's;
///      anything else (a Manager) -> shared;
///   2. an Id or Name prefixed with a system's Id and a dot ("Node1.BIOS", "Node0.Acc2.VBIOS",
///      the EX235n convention) -> that system's;
///   3. otherwise shared (the BMC itself, blade FPGAs, the recovery image): every node sees it.
/// Links compare case-insensitively without a trailing '/', as BMCs match them.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace plumb::modules::firmware {

/// One system of the BMC, as far as scoping needs it.
struct SystemRef {
  std::string link;                    ///< the ComputerSystem
  std::string id;                      ///< its Id (the link's last segment)
  std::vector<std::string> chassis;    ///< its Links.Chassis
};

/// The node's system and the BMC's others.
struct SystemsView {
  SystemRef own;
  std::vector<SystemRef> others;
};

enum class ItemScope { kOwn, kShared, kOther };

struct Scoped {
  ItemScope scope = ItemScope::kShared;
  /// The Id without its system prefix when rule 2 placed it ("Node1.BIOS" -> "BIOS"): a pin by
  /// that name works for every node of such a blade and targets each node's own device.
  std::string short_id;
};

Scoped ScopeOf(const nlohmann::json& member, const SystemsView& view);

}  // namespace plumb::modules::firmware
