#include "modules/os/os.h"

#include "modules/module_util.h"
#include "modules/os/parse.h"

namespace plumb::modules::os {

const ModuleInfo& OsModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "os",
      .owns = {},
      .channel = Channel::kInBand,
      .after = {},
      .reads = "`/etc/os-release`",
      .changes = "-",
      .disruption = Disruption::kNone};
  return kInfo;
}

Result<Facts> OsModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return FactsFromParts(*parts);
}

}  // namespace plumb::modules::os
