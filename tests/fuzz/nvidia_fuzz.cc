// Parser family: NVIDIA driver (proc version, nvidia-smi CSV, modinfo, fabric manager, systemctl show).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "modules/nvidia_driver/parse.h"
#include "modules/services/parse.h"

using namespace plumb::modules;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  plumb::fuzz::CheckParse(nvidia_driver::ParseProcVersion(in));
  plumb::fuzz::CheckParse(nvidia_driver::ParseSmiCsv(in));
  plumb::fuzz::CheckParse(nvidia_driver::ParseModinfoVersion(in));
  plumb::fuzz::CheckParse(nvidia_driver::ParseFabricManagerVersion(in));
  plumb::fuzz::CheckParse(services::ParseSystemctlShow(in));
  std::string text(in);
  for (const char* part : {"proc_version", "smi", "modinfo", "fm_version", "fm_service"})
    plumb::fuzz::CheckParse(nvidia_driver::FactsFromParts({{part, 0, text}, {"pm", 0, text}}));
  return 0;
}
