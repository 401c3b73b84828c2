#include "cli/version_text.h"

#include <fmt/format.h>

namespace plumb::cli {

std::string VersionText(const BuildInfo& b) {
  std::string out = fmt::format("plumb {}\ncommit     {}\nallocator  {}\n", b.version, b.commit,
                                b.allocator);
  for (const auto& [name, v] : b.libraries) out += fmt::format("{:<10} {}\n", name, v);
  return out;
}

nlohmann::json VersionJson(const BuildInfo& b) {
  nlohmann::json j = {{"version", b.version}, {"commit", b.commit}, {"allocator", b.allocator},
                      {"libraries", nlohmann::json::object()}};
  for (const auto& [name, v] : b.libraries) j["libraries"][name] = v;
  return j;
}

}  // namespace plumb::cli
