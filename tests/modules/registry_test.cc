#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <set>
#include <string>

#include "modules/registry.h"

using namespace plumb::modules;

TEST_CASE("registry: names are unique, known to FindModule, and After() names exist") {
  std::set<std::string> names;
  for (const Module* m : AllModules()) {
    CHECK(names.insert(std::string(m->Name())).second);
    CHECK(FindModule(m->Name()) == m);
  }
  for (const char* n : {"kernel", "os", "nvidia_driver", "cuda", "nccl", "ofed", "packages", "sysctl",
                        "services", "kernel_modules", "infiniband", "marker"})
    CHECK_MESSAGE(FindModule(n) != nullptr, n);
  CHECK(FindModule("nope") == nullptr);
  for (const Module* m : AllModules())
    for (auto dep : m->After()) CHECK_MESSAGE(FindModule(dep) != nullptr, std::string(dep));
}

TEST_CASE("registry: After() has no cycles") {
  // Depth-first search with colours: grey = on the current path; reaching a grey node is a cycle.
  std::map<std::string, int> colour;
  std::function<bool(const Module*)> visit = [&](const Module* m) {
    auto& c = colour[std::string(m->Name())];
    if (c == 1) return false;
    if (c == 2) return true;
    c = 1;
    for (auto dep : m->After()) {
      const Module* d = FindModule(dep);
      if (d && !visit(d)) return false;
    }
    colour[std::string(m->Name())] = 2;
    return true;
  };
  for (const Module* m : AllModules()) CHECK_MESSAGE(visit(m), std::string(m->Name()));
}
