#pragma once
/// dcgm: the NVIDIA DCGM diagnostic, on demand (ModuleInfo::on_demand): `dcgmi diag -r <level>
/// -j` loads every GPU for seconds (level 1) to hours (level 4), so it never runs in gather's
/// probe; `plumb health`, acceptance and the rollout's health step run CheckScript. Desired
/// `health.dcgm: { level: 1-4, timeout_s: N, fail_on_warn: bool }`; the GPU count DCGM sees is
/// held to `health.gpu_health.expected_gpus` when that is set.
///
/// Checks: one per test result that is not a pass (fail: kFail; warn: kWarn, kFail with
/// fail_on_warn), one overall pass when every result passed or was skipped; dcgmi missing, the
/// host engine unreachable, DCGM's runtime_error and a part that could not be read are kFail.
#include "modules/health_util.h"

namespace plumb::modules::dcgm {

class DcgmModule final : public HealthModule {
 public:
  DcgmModule();
  const ModuleInfo& Info() const override;
  /// `dcgmi discovery -l` (part "discovery"), then `dcgmi diag -r <level> -j` (part "diag")
  /// under `timeout <TimeoutSeconds>`.
  std::string CheckScript(const nlohmann::json& desired) const override;
  std::chrono::seconds CheckTimeout(const nlohmann::json& desired) const override;
  std::vector<CheckResult> Checks(const nlohmann::json& desired, const Facts& facts) const override;
};

/// The diagnostic level `desired` asks for: health.dcgm.level, 1 when unset.
int Level(const nlohmann::json& desired);
/// How long the diagnostic may run, in seconds: health.dcgm.timeout_s, else the level's
/// default (kDefaultTimeoutS). The caller's SSH command timeout must exceed it.
int TimeoutSeconds(const nlohmann::json& desired);
/// Per level 1-4: NVIDIA documents r1 as seconds, r2 as about two minutes, r3 as about half an
/// hour and r4 as one to two hours on an 8-GPU node; each default has headroom over that.
inline constexpr int kDefaultTimeoutS[] = {120, 600, 1800, 7200};

}  // namespace plumb::modules::dcgm
