#pragma once
/// A module that owns /sysctl, for plan and read-run tests: one action per key whose fact
/// differs (before/after filled), disruption none. Its probe script is never really run.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/module.h"

namespace plumb::fakes {

class SysctlLikeModule : public modules::Module {
 public:
  const modules::ModuleInfo& Info() const override {
    static const modules::ModuleInfo kInfo = [] {
      modules::ModuleInfo i;
      i.name = "sysctl";
      i.owns = {"/sysctl"};
      return i;
    }();
    return kInfo;
  }
  std::string ProbeScript() const override { return "sysctl -a"; }
  std::vector<modules::Action> Diff(const nlohmann::json& desired,
                                    const modules::Facts& facts) const override {
    std::vector<modules::Action> out;
    for (auto it = desired["sysctl"].begin(); it != desired["sysctl"].end(); ++it) {
      nlohmann::json have = facts["values"].value(it.key(), nlohmann::json());
      if (have == it.value()) continue;
      modules::Action a;
      a.module = "sysctl";
      a.id = "sysctl.set." + it.key();
      a.key = "sysctl." + it.key();
      a.pointer = "/sysctl/" + it.key();
      a.before = have;
      a.after = it.value();
      out.push_back(a);
    }
    return out;
  }
};

}  // namespace plumb::fakes
