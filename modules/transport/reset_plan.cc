#include "modules/transport/reset_plan.h"

#include <algorithm>

namespace plumb::transport {

const char* ResetKindName(ResetKind k) {
  switch (k) {
    case ResetKind::kReboot: return "reboot";
    case ResetKind::kHardReboot: return "hard-reboot";
    case ResetKind::kOn: return "on";
    case ResetKind::kOff: return "off";
    case ResetKind::kForceOff: return "force-off";
  }
  return "reboot";
}

std::vector<std::vector<std::string>> ResetCandidates(ResetKind kind,
                                                      const std::vector<std::string>& allowable,
                                                      const std::string& power_state) {
  using Seq = std::vector<std::string>;
  std::vector<Seq> wanted;
  const bool off = power_state == "Off";
  switch (kind) {
    case ResetKind::kReboot:
      wanted = off ? std::vector<Seq>{{"On"}, {"ForceOn"}, {"PushPowerButton"}}
                   : std::vector<Seq>{{"GracefulRestart"}, {"ForceRestart"}, {"PowerCycle"},
                                      {"GracefulShutdown", "On"}, {"ForceOff", "On"},
                                      {"GracefulShutdown", "ForceOn"}, {"ForceOff", "ForceOn"}};
      break;
    case ResetKind::kHardReboot:
      wanted = off ? std::vector<Seq>{{"On"}, {"ForceOn"}, {"PushPowerButton"}}
                   : std::vector<Seq>{{"ForceRestart"}, {"PowerCycle"}, {"ForceOff", "On"},
                                      {"ForceOff", "ForceOn"}};
      break;
    case ResetKind::kOn:
      if (power_state == "On") return {{}};
      wanted = {{"On"}, {"ForceOn"}, {"PushPowerButton"}};
      break;
    case ResetKind::kOff:
      if (off) return {{}};
      wanted = {{"GracefulShutdown"}, {"ForceOff"}, {"PushPowerButton"}};
      break;
    case ResetKind::kForceOff:
      if (off) return {{}};
      wanted = {{"ForceOff"}, {"GracefulShutdown"}};
      break;
  }
  if (allowable.empty()) return wanted;
  std::vector<Seq> out;
  for (const auto& seq : wanted) {
    bool all = std::all_of(seq.begin(), seq.end(), [&](const std::string& t) {
      return std::find(allowable.begin(), allowable.end(), t) != allowable.end();
    });
    if (all) out.push_back(seq);
  }
  return out;
}

}  // namespace plumb::transport
