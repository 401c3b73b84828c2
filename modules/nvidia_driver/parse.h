#pragma once
/// Pure parsers for the NVIDIA driver probe: /proc/driver/nvidia/version, nvidia-smi's CSV query,
/// `modinfo -F version nvidia`, `nv-fabricmanager --version`.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::nvidia_driver {

/// The loaded kernel module, from /proc/driver/nvidia/version.
struct ProcVersion {
  std::string version;   ///< "550.90.07"
  std::string flavor;    ///< "proprietary" or "open"
};
Result<ProcVersion> ParseProcVersion(std::string_view text);

struct Gpu {
  int index = 0;
  std::string bus_id, name, driver_version;
  std::optional<bool> persistence_mode;   ///< nullopt for "[N/A]"
};
/// What nvidia-smi said. `nvml` is "ok", "version-mismatch", "no-driver" or "no-devices"
/// (FactsFromParts adds "timeout" for exit 124 and "error" for another failure, and "absent").
struct SmiQuery {
  std::string nvml = "ok";
  std::string nvml_library_version;   ///< from "NVML library version: 550.90" when mismatched
  std::vector<Gpu> gpus;
  /// With a known failure: the other lines of the output, verbatim (another tool's stderr
  /// that nvidia-smi let through, e.g. `modprobe: FATAL: Module nvidia not found in directory
  /// /lib/modules/...`), at most kMaxSmiNotes. They often say why the driver is missing.
  std::vector<std::string> notes;
};
inline constexpr size_t kMaxSmiNotes = 8;
/// The NVML state a line of nvidia-smi's output reports in words ("version-mismatch",
/// "no-driver", "no-devices"), or nullptr. `line` is trimmed. Other nvidia-smi queries
/// (modules/gpu_health) read the same failures.
const char* SmiFailureState(std::string_view line);
/// `nvidia-smi --query-gpu=index,pci.bus_id,name,driver_version,persistence_mode
///  --format=csv,noheader` (a header row is tolerated). A known failure text anywhere in the
/// output (other tools' stderr may come before it) becomes the `nvml` state, not an error;
/// without one, every line must be a row, and anything else is a located error. The same on
/// every driver branch: R610 deprecated `driver_version` for `kmd_version` but still answers it.
Result<SmiQuery> ParseSmiCsv(std::string_view text);

/// `modinfo -F version nvidia`: the version on disk (what loads at next boot); nullopt when
/// modinfo says the module is not found.
Result<std::optional<std::string>> ParseModinfoVersion(std::string_view text);
/// `nv-fabricmanager --version`: "Fabric Manager version is : 550.90.07".
Result<std::string> ParseFabricManagerVersion(std::string_view text);

/// Parts proc_version, smi, modinfo, fm_version, fm_service, pm -> facts
/// (modules/nvidia_driver/facts.schema.json). Each part is read on its own (modules/part_facts.h):
/// one that cannot be read leaves its facts null and is listed under "part_errors".
nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts);

}  // namespace plumb::modules::nvidia_driver
