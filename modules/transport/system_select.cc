#include "modules/transport/system_select.h"
#include "schemas/ascii.h"

#include <algorithm>
#include <cctype>

namespace plumb::transport {
namespace {

std::string Listed(const std::vector<std::string>& links) {
  std::string out;
  for (const auto& l : links) out += (out.empty() ? "" : ", ") + LastSegment(l);
  return out;
}

}  // namespace

std::string LastSegment(const std::string& link) {
  std::string s = link.substr(0, link.find('?'));
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  auto slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

Result<std::string> SelectSystem(const std::vector<std::string>& links, const std::string& wanted,
                                 const std::string& bmc, const std::string& node) {
  const std::string who = node.empty() ? "" : "node " + node + ": ";
  if (links.empty()) {
    return Diagnostic::Error("bmc.payload", who + bmc + ": the Systems collection is empty");
  }
  if (wanted.empty()) {
    if (links.size() == 1) return links[0];
    return Diagnostic::Error(
        "bmc.system.ambiguous",
        who + bmc + " manages " + std::to_string(links.size()) + " systems (" + Listed(links) +
            ") and the node does not say which one is its own",
        {}, "bmc_system",
        "name the node's system in inventory.yaml, e.g. bmc_system: " + LastSegment(links[0]) +
            " (or system=" + LastSegment(links[0]) + " on its --targets line)");
  }
  for (const auto& l : links) {
    if (LastSegment(l) == wanted) return l;
  }
  for (const auto& l : links) {
    if (schemas::AsciiLower(LastSegment(l)) == schemas::AsciiLower(wanted)) return l;
  }
  return Diagnostic::Error("bmc.system.unknown",
                           who + bmc + " has no system '" + wanted + "' (it has " + Listed(links) + ")",
                           {}, "bmc_system", "set bmc_system to one of: " + Listed(links));
}

}  // namespace plumb::transport
