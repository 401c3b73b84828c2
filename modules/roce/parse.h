#pragma once
/// Pure parsers for the RoCE QoS probe: the mlx5 Ethernet netdevs found in /sys/class/net,
/// `mlnx_qos -i IFACE` per netdev (priority trust state, PFC enabled priorities), and
/// `grep -H '' /sys/class/net/IFACE/ecn/roce_{np,rp}/enable/N` (ECN per priority).
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::roce {

/// Probe part names: the netdev list, mlnx_qos's path, one mlnx_qos output per netdev
/// ("qos." + name, the name is the netdev's), and every netdev's ECN files.
inline constexpr std::string_view kInterfacesPart = "interfaces";
inline constexpr std::string_view kToolPart = "tool";
inline constexpr std::string_view kQosPartPrefix = "qos.";
inline constexpr std::string_view kEcnPart = "ecn";
/// What plumb persisted for the boot-time restore (`grep -H '' <kPersistDir>/*.sh`), and the
/// state of the unit that replays it (`systemctl is-enabled <kRestoreUnit>`).
inline constexpr std::string_view kPersistedPart = "persisted";
inline constexpr std::string_view kRestoreUnitPart = "restore_unit";

/// The NIC forgets trust, PFC and ECN at a reboot or driver reload. plumb keeps each setting it
/// made as one command line in `<kPersistDir>/<netdev>.<setting>.sh` (setting: trust, pfc, ecn),
/// and a oneshot unit, kRestoreUnit, runs them at boot.
inline constexpr std::string_view kPersistDir = "/etc/plumb/roce.d";
inline constexpr std::string_view kRestoreUnit = "plumb-roce.service";

/// A netdev name plumb will put in a command or a path: 1-15 of [A-Za-z0-9_.-] (IFNAMSIZ - 1),
/// not starting with '-' or '.'. The kernel allows more; a name outside this set is reported,
/// never written to.
bool IsSafeInterface(std::string_view name);

/// A name the kernel accepts for a netdev (dev_valid_name: 1-15 bytes, not "." or "..", no '/',
/// ':' or whitespace).
bool IsNetdevName(std::string_view name);

/// What `mlnx_qos -i IFACE` (no options: read only) says about one netdev.
struct Qos {
  std::string trust;        ///< "pcp", "dscp", or "none" (mlnx_qos: not supported on this system)
  std::vector<int> pfc;     ///< the priorities (0-7) with PFC enabled, ascending
};
/// Needs the "Priority trust state:" line and the PFC table ("priority" row 0..7 and its
/// "enabled" row of 0/1 flags); every other line (DCBX mode, dscp2prio, buffers, tc lines, the
/// lldpad warning) is ignored.
Result<Qos> ParseMlnxQos(std::string_view text);

/// One netdev's ECN flags per priority: enabled[p] is nullopt when that file was not read.
struct EcnFlags {
  std::array<std::optional<bool>, 8> np{}, rp{};
};
/// "/sys/class/net/<if>/ecn/roce_(np|rp)/enable/<0-7>:<0|1>" lines -> flags per netdev.
Result<std::map<std::string, EcnFlags>> ParseEcn(std::string_view text);

/// `grep -H '' <kPersistDir>/*.sh` -> netdev -> setting -> the file's text (its lines joined by
/// '\n'). Files not named `<netdev>.<trust|pfc|ecn>.sh` are not plumb's and are skipped.
std::map<std::string, std::map<std::string, std::string>> ParsePersisted(std::string_view text);

/// Parts -> {"mlnx_qos": bool, "restore_unit": "enabled"|"disabled"|"masked"|"not-found"|
/// "no-systemd"|..., "persisted": {netdev: {setting: command}}, "interfaces": [{"name", "trust",
/// "pfc", "ecn_np", "ecn_rp"}], "part_errors"?}; restore_unit and persisted are null when their
/// parts were not read (modules/roce/facts.schema.json). Each part is read on its own
/// (modules/part_facts.h): one netdev's garbled mlnx_qos output costs that netdev's trust and
/// PFC, not the others'.
nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts);

}  // namespace plumb::modules::roce
