#include "modules/bmc_modules.h"

#include "modules/bios/bios.h"
#include "modules/firmware/firmware.h"
#include "modules/power/power.h"

namespace plumb::modules {

std::vector<ModulePtr> BmcModules() {
  std::vector<ModulePtr> out;
  out.push_back(std::make_unique<firmware::FirmwareModule>());
  out.push_back(std::make_unique<bios::BiosModule>());
  out.push_back(std::make_unique<power::PowerModule>());
  return out;
}

}  // namespace plumb::modules
