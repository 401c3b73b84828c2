#pragma once
/// gpu_health: the GPUs' own health signals, read in gather's probe (cheap: one nvidia-smi
/// query and the kernel log's XID lines). Desired `health.gpu_health`:
///   expected_gpus                   the GPU count nvidia-smi must list (unset: not checked)
///   max_uncorrected_ecc             uncorrected ECC errors per GPU since the driver loaded
///                                   (volatile), default 0
///   max_aggregate_uncorrected_ecc   lifetime (InfoROM) uncorrected errors per GPU; unset: not
///                                   checked (a repaired GPU keeps its history)
///   require_ecc                     ECC must be enabled where the GPU has it, default true
///   allow_remap_pending             a row remap (or page retirement) waiting for a GPU reset
///                                   warns instead of failing, default false
///   allow_remap_failure             a failed row remap warns instead of failing, default false
///   forbid_xids                     XID codes that fail the node (kDefaultForbiddenXids);
///                                   every other XID since boot warns
///   forbid_throttle                 active clock throttle reasons that fail
///                                   (kDefaultForbiddenThrottle); others are reported
/// XIDs are those the kernel logged since boot: a GPU repaired without a reboot keeps failing
/// until the node reboots (the repair of most forbidden XIDs is a GPU reset or a reboot anyway).
#include <array>
#include <string_view>

#include "modules/health_util.h"

namespace plumb::modules::gpu_health {

class GpuHealthModule final : public HealthModule {
 public:
  GpuHealthModule();
  const ModuleInfo& Info() const override;
  /// nvidia-smi's health query (part "smi") and the XID lines of the kernel log since boot
  /// (part "kmsg": `dmesg`, or `journalctl -k -b` where dmesg is refused), filtered on the
  /// node so only XID lines (and the log's "could not read" lines) travel.
  std::string ProbeScript() const override;
  std::vector<CheckResult> Checks(const nlohmann::json& desired, const Facts& facts) const override;
};

/// XIDs that mean the GPU needs a reset, a reboot or a repair (NVIDIA's XID catalogue):
///   48 double-bit ECC error; 63 a row remap / page retirement was recorded (pending until a
///   reset); 64 recording the remap or retirement failed; 74 NVLink error; 79 the GPU has fallen
///   off the bus; 92 high single-bit ECC error rate; 94 contained ECC error (reset needed);
///   95 uncontained ECC error.
/// XIDs a user program causes (13 graphics exception, 31 MMU fault, 43 stopped channel, 45
/// preemptive cleanup...) only warn.
inline constexpr std::array<int, 8> kDefaultForbiddenXids = {48, 63, 64, 74, 79, 92, 94, 95};
/// Throttle reasons that mean failing hardware or cooling, not load: the slowdown signal from
/// the board (hw_slowdown), the GPU over its temperature limit (hw_thermal_slowdown), the
/// power brake asserted by the system (hw_power_brake_slowdown). sw_power_cap and
/// sw_thermal_slowdown happen under heavy load on healthy GPUs.
inline constexpr std::array<std::string_view, 3> kDefaultForbiddenThrottle = {
    "hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"};

}  // namespace plumb::modules::gpu_health
