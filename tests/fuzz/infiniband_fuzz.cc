// Parser family: InfiniBand (ibstat, ibv_devinfo).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "modules/infiniband/parse.h"

using namespace plumb::modules;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  plumb::fuzz::CheckParse(infiniband::ParseIbstat(in));
  for (int status : {0, 124, 255})
    plumb::fuzz::CheckParse(infiniband::FactsFromParts({{"ibstat", status, std::string(in)}}));
  plumb::fuzz::CheckParse(infiniband::ParseIbvDevinfo(in));
  std::string text(in);
  plumb::fuzz::CheckParse(infiniband::FactsFromParts({{"ibstat", 0, text}, {"devinfo", 0, text}}));
  return 0;
}
