#pragma once
/// nccl_bw: NCCL all-reduce bandwidth across the node's GPUs, on demand (ModuleInfo::on_demand):
/// nccl-tests' all_reduce_perf loads every GPU and NVLink for a minute or more, so it never
/// runs in gather's probe. Desired `health.nccl_bw`:
///   min_busbw_gbps   bus bandwidth (GB/s) the largest message must reach (required)
///   max_wrong        #wrong values allowed over every row, default 0
///   max_bytes        the largest message, bytes or nccl-tests' "8G" form, default "8G"
///   timeout_s        how long the run may take, default kDefaultTimeoutS
/// The run uses every GPU: health.gpu_health.expected_gpus when set, else the count
/// `nvidia-smi -L` lists on the node.
#include "modules/health_util.h"

namespace plumb::modules::nccl_bw {

class NcclBwModule final : public HealthModule {
 public:
  NcclBwModule();
  const ModuleInfo& Info() const override;
  /// `all_reduce_perf -b 8 -e <max_bytes> -f 2 -g <gpus>` as part "allreduce", under
  /// `timeout <TimeoutSeconds>`, with NCCL_DEBUG=WARN so NCCL's warnings reach the facts.
  std::string CheckScript(const nlohmann::json& desired) const override;
  std::chrono::seconds CheckTimeout(const nlohmann::json& desired) const override;
  std::vector<CheckResult> Checks(const nlohmann::json& desired, const Facts& facts) const override;
};

/// The largest message size, as all_reduce_perf's -e takes it ("8G", "1073741824").
std::string MaxBytes(const nlohmann::json& desired);
/// How long the run may take, in seconds (health.nccl_bw.timeout_s or kDefaultTimeoutS).
int TimeoutSeconds(const nlohmann::json& desired);
/// 8 x H100 reach 8 GiB in about a minute (31 sizes, each 5 warm-ups and 20 timed iterations,
/// out of place and in place);
/// ten minutes covers slower fabrics and a cold start.
inline constexpr int kDefaultTimeoutS = 600;

}  // namespace plumb::modules::nccl_bw
