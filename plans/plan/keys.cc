#include "plans/plan/keys.h"

#include <fnmatch.h>

#include "modules/registry.h"

namespace plumb::plans {
namespace {

void Walk(const nlohmann::json& j, std::string& path, std::vector<std::string>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      size_t len = path.size();
      path += '/';
      for (char c : it.key()) {
        if (c == '~') path += "~0";
        else if (c == '/') path += "~1";
        else path += c;
      }
      Walk(it.value(), path, out);
      path.resize(len);
    }
    return;
  }
  out.push_back(path);
}

}  // namespace

std::string PointerToKey(std::string_view pointer) {
  std::string out;
  out.reserve(pointer.size());
  for (size_t i = 0; i < pointer.size(); ++i) {
    char c = pointer[i];
    if (c == '/') {
      if (i != 0) out += '.';
    } else if (c == '~' && i + 1 < pointer.size()) {
      out += pointer[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      out += c;
    }
  }
  return out;
}

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

bool PointerUnder(std::string_view pointer, std::string_view prefix) {
  if (pointer.size() < prefix.size() || pointer.substr(0, prefix.size()) != prefix) return false;
  return pointer.size() == prefix.size() || pointer[prefix.size()] == '/';
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
