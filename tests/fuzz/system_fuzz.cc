// Parser family: system text (uname, boot id, os-release, sysctl, systemd listings, module
// parameters, ofed_info, CUDA version files, plumb's marker).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "modules/cuda/parse.h"
#include "modules/kernel/parse.h"
#include "modules/kernel_modules/parse.h"
#include "modules/marker/parse.h"
#include "modules/ofed/parse.h"
#include "modules/os/parse.h"
#include "modules/services/parse.h"
#include "modules/sysctl/parse.h"

using namespace plumb::modules;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  using plumb::fuzz::CheckParse;
  CheckParse(kernel::ParseUnameRelease(in));
  CheckParse(kernel::ParseBootId(in));
  CheckParse(os::ParseOsRelease(in));
  CheckParse(sysctl::ParseSysctlAll(in));
  CheckParse(services::ParseListUnitFiles(in));
  CheckParse(services::ParseListUnits(in));
  CheckParse(kernel_modules::ParseModuleParams(in));
  CheckParse(ofed::ParseOfedInfo(in));
  CheckParse(cuda::ParseVersionJson(in));
  CheckParse(cuda::ParseVersionTxt(in));
  CheckParse(marker::ParseMarker(in));
  std::string t(in);
  CheckParse(services::FactsFromParts({{"unit_files", 0, t}, {"units", 1, t}}));
  CheckParse(cuda::FactsFromParts({{"version_json", 0, t}, {"toolkits", 0, t}}));
  (void)ofed::OfedVersionMatches(in.substr(0, size / 2), in.substr(size / 2));
  (void)cuda::VersionPrefixMatches(in.substr(0, size / 2), in.substr(size / 2));
  return 0;
}
