#include "plans/plan/keys.h"

#include <fnmatch.h>

#include "modules/registry.h"
#include "schemas/json_pointer.h"

namespace plumb::plans {
namespace {

void Walk(const nlohmann::json& j, std::string& path, std::vector<std::string>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      size_t len = path.size();
      path += '/';
      path += schemas::PointerToken(it.key());
      Walk(it.value(), path, out);
      path.resize(len);
    }
    return;
  }
  out.push_back(path);
}

}  // namespace

std::vector<std::string> LeafPointers(const nlohmann::json& doc) {
  std::vector<std::string> out;
  if (!doc.is_object()) return out;
  std::string path;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    path = "/" + it.key();
    Walk(it.value(), path, out);
  }
  return out;
}

modules::Disruption KeyDisruption(std::string_view p, const modules::Registry& registry) {
  const modules::Module* owner = registry.OwnerOf(p);
  // A key no module checks changes nothing (validate refuses to pin one).
  return owner == nullptr ? modules::Disruption::kNone : owner->Info().DisruptionOf(p);
}

bool GlobMatch(std::string_view pattern, std::string_view text) {
  return fnmatch(std::string(pattern).c_str(), std::string(text).c_str(), 0) == 0;
}

}  // namespace plumb::plans
