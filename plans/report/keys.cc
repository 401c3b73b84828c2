#include "plans/report/keys.h"

#include <fnmatch.h>

#include "modules/registry.h"

namespace plumb::plans::report {
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

modules::Disruption KeyDisruption(std::string_view p) {
  using modules::Disruption;
  // Key prefixes first (a module whose keys disturb differently), then whole modules, by the
  // module that checks the key (the registry's ModuleInfo::owns).
  struct KeyRow { std::string_view prefix; Disruption d; };
  static constexpr KeyRow kKeys[] = {
      {"/nvidia/persistence_mode", Disruption::kNone},
      {"/nvidia/fabricmanager", Disruption::kDrain},
      {"/firmware_images", Disruption::kNone},   // where an image is fetched from: no change by itself
      {"/fabric/roce/ecn", Disruption::kNone},    // trust and PFC: service-restart (modules/roce/roce.cc)
  };
  for (const KeyRow& r : kKeys)
    if (PointerUnder(p, r.prefix)) return r.d;
  struct ModuleRow { std::string_view module; Disruption d; };
  static constexpr ModuleRow kModules[] = {
      {"kernel", Disruption::kReboot},        {"nvidia_driver", Disruption::kReboot},
      {"cuda", Disruption::kDrain},           {"nccl", Disruption::kDrain},
      {"ofed", Disruption::kReboot},          {"packages", Disruption::kDrain},
      {"sysctl", Disruption::kNone},          {"services", Disruption::kServiceRestart},
      {"kernel_modules", Disruption::kReboot}, {"infiniband", Disruption::kDrain},
      {"roce", Disruption::kServiceRestart},
      {"firmware", Disruption::kFirmwareFlash}, {"bios", Disruption::kReboot},
      {"power", Disruption::kReboot},
  };
  const modules::Module* owner = modules::OwnerOf(p);
  if (owner == nullptr) return Disruption::kNone;   // no module checks it: nothing changes
  for (const ModuleRow& r : kModules)
    if (r.module == owner->Name()) return r.d;
  return Disruption::kNone;
}

bool GlobMatch(std::string_view pattern, std::string_view text) {
  return fnmatch(std::string(pattern).c_str(), std::string(text).c_str(), 0) == 0;
}

}  // namespace plumb::plans::report
