// Parser family: health (dcgmi diag JSON and discovery table, nvidia-smi health fields, kernel-log
// XIDs, all_reduce_perf output, perfquery counters).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "modules/dcgm/parse.h"
#include "modules/gpu_health/parse.h"
#include "modules/ib_health/parse.h"
#include "modules/nccl_bw/parse.h"

using namespace plumb::modules;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  plumb::fuzz::CheckParse(dcgm::ParseDiagJson(in));
  plumb::fuzz::CheckParse(dcgm::ParseDiscovery(in));
  plumb::fuzz::CheckParse(gpu_health::ParseHealthCsv(in));
  plumb::fuzz::CheckParse(gpu_health::ParseKernelLog(in));
  plumb::fuzz::CheckParse(nccl_bw::ParseAllReducePerf(in));
  plumb::fuzz::CheckParse(ib_health::ParsePerfquery(in));
  std::string text(in);
  for (int status : {0, 1, 124}) {
    plumb::fuzz::CheckParse(dcgm::FactsFromParts({{"diag", status, text}, {"discovery", status, text}}));
    plumb::fuzz::CheckParse(gpu_health::FactsFromParts({{"smi", status, text}, {"kmsg", status, text}}));
    plumb::fuzz::CheckParse(nccl_bw::FactsFromParts({{"allreduce", status, text}}));
    plumb::fuzz::CheckParse(ib_health::FactsFromParts({{"perfquery.mlx5_0.1", status, text}}));
  }
  return 0;
}
