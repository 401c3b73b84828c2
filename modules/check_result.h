#pragma once
/// A health check's verdict (Module::Checks, ModuleInfo::Kind::kHealth): one test on one subject
/// (a GPU, a port, the node), what was measured and what the stack allows.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace plumb::modules {

/// Ordered by severity: a node's verdict is its worst check's. kSkip: the check could not run
/// or did not apply (no GPU, DCGM skipped the test); it neither passes nor fails a node.
enum class CheckStatus { kPass = 0, kSkip = 1, kWarn = 2, kFail = 3 };
const char* CheckStatusName(CheckStatus s);   // "pass", "skip", "warn", "fail"

struct CheckResult {
  std::string module;        ///< "dcgm"
  std::string id;            ///< stable within a node: "dcgm.memory.gpu3", "nccl_bw.busbw"
  std::string name;          ///< for people: "DCGM Memory", "NCCL all_reduce bus bandwidth"
  std::string subject;       ///< "GPU 3", "mlx5_0 port 1", "" for the node as a whole
  CheckStatus status = CheckStatus::kPass;
  nlohmann::json measured;   ///< 352.1, "fail", 0, null when nothing was measured
  nlohmann::json threshold;  ///< what is allowed: {"min": 350}, {"max": 0}, "pass"
  std::string message;       ///< why it failed or warned (DCGM's text, "412.3 < 350")

  nlohmann::json ToJson() const;
};

}  // namespace plumb::modules
