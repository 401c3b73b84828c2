#include "modules/bmc_modules.h"

#include "modules/registry.h"

namespace plumb::modules {

const std::vector<const Module*>& BmcModules() {
  static const std::vector<const Module*> kBmc = [] {
    std::vector<const Module*> out;
    for (const Module* m : AllModules())
      if (m->HasBmcProbe()) out.push_back(m);
    return out;
  }();
  return kBmc;
}

}  // namespace plumb::modules
