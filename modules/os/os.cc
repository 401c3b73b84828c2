#include "modules/os/os.h"

#include "modules/module_util.h"
#include "modules/os/parse.h"

namespace plumb::modules::os {

const ModuleInfo& OsModule::Info() const {
  static const ModuleInfo kInfo{
      "os",
      {},
      Channel::kInBand,
      {},
      "`/etc/os-release`",
      "-",
      "-"};
  return kInfo;
}

Result<Facts> OsModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return FactsFromParts(*parts);
}

}  // namespace plumb::modules::os
