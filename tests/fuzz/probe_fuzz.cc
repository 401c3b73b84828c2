// Parser family: the probe wire format (section split, framed parts) and every module's
// ParseProbe on arbitrary section text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_check.h"
#include "modules/probe_script.h"
#include "modules/registry.h"

using namespace plumb::modules;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  // "x" as the nonce lets mutated inputs hit real markers ("@plumb:x:begin kernel").
  auto split = SplitProbeOutput(in, "x", {"kernel"});
  for (const auto& [name, section] : split.sections) {
    auto parts = ParseFramedParts(section.out);
    if (!parts.ok()) std::abort();   // the splitter's own framing must always read back
    if (const Module* m = FindModule(name)) plumb::fuzz::CheckParse(m->ParseProbe(section.out, section.exit_status));
  }
  (void)ParseFramedParts(in);
  for (const Module* m : AllModules()) {
    auto r = m->ParseProbe(in, 0);
    if (!r.ok() && r.error().code != "probe." + std::string(m->Name()) && r.error().code != "probe.unsupported")
      std::abort();
  }
  return 0;
}
