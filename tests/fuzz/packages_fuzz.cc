// Parser family: package lists (dpkg-query, rpm), apt-cache madison, version matching.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "modules/nccl/parse.h"
#include "modules/package_map.h"
#include "modules/packages/parse.h"

using namespace plumb::modules;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  plumb::fuzz::CheckParse(packages::ParseDpkgQuery(in));
  plumb::fuzz::CheckParse(packages::ParseRpmQuery(in));
  std::string text(in);
  for (const char* pm : {"dpkg\n", "rpm\n"}) {
    plumb::fuzz::CheckParse(packages::FactsFromParts({{"list", 0, text}, {"pm", 0, pm}}));
    plumb::fuzz::CheckParse(nccl::FactsFromParts({{"pkgs", 1, text}, {"pm", 0, pm}}));
  }
  (void)PickMadisonVersion(in, "cuda-drivers-550", "550.90.07");
  size_t half = size / 2;
  (void)packages::VersionMatches("rpm", in.substr(0, half), in.substr(half));
  (void)DebUpstream(in);
  return 0;
}
