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

bool IsGracefulOff(const std::string& t) { return t == "GracefulShutdown" || t == "Off"; }

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
                                      {"GracefulShutdown", "On"}, {"Off", "On"}, {"ForceOff", "On"},
                                      {"GracefulShutdown", "ForceOn"}, {"Off", "ForceOn"},
                                      {"ForceOff", "ForceOn"}};
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
      wanted = {{"GracefulShutdown"}, {"Off"}, {"ForceOff"}, {"PushPowerButton"}};
      break;
    case ResetKind::kForceOff:
      if (off) return {{}};
      wanted = {{"ForceOff"}, {"GracefulShutdown"}};
      break;
  }
  std::vector<Seq> out;
  if (allowable.empty()) {
    // Guesses are standard values only: "Off" is one vendor's, sent where it is listed.
    for (auto& seq : wanted)
      if (std::find(seq.begin(), seq.end(), "Off") == seq.end()) out.push_back(std::move(seq));
    return out;
  }
  for (const auto& seq : wanted) {
    bool all = std::all_of(seq.begin(), seq.end(), [&](const std::string& t) {
      return std::find(allowable.begin(), allowable.end(), t) != allowable.end();
    });
    if (all) out.push_back(seq);
  }
  return out;
}

}  // namespace plumb::transport
