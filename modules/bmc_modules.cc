#include "modules/bmc_modules.h"

#include "modules/bios/bios.h"
#include "modules/firmware/firmware.h"
#include "modules/power/power.h"

namespace plumb::modules {

std::vector<ModulePtr> BmcModules() {
  std::vector<ModulePtr> out;
  out.push_back(std::make_unique<FirmwareModule>());
  out.push_back(std::make_unique<BiosModule>());
  out.push_back(std::make_unique<PowerModule>());
  return out;
}

}  // namespace plumb::modules
