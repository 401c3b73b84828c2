// The module registry is the one place that says what modules exist and what they own; these
// checks keep everything else (the stack schema, the facts schemas, the README) in step with
// it, without a second list of module names anywhere in the tests.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "modules/bmc_modules.h"
#include "modules/registry.h"
#include "schemas/embedded.h"

using namespace plumb::modules;

namespace {

nlohmann::json Embedded(const std::string& name) {
  auto text = plumb::schemas::FindEmbedded(name);
  REQUIRE_MESSAGE(text.has_value(), name);
  return nlohmann::json::parse(std::string(*text));
}

// Every pinnable path of the stack schema: descend through "properties" until a path some
// module owns, or a leaf nobody owns (reported to `unowned`).
void WalkSchema(const nlohmann::json& node, const std::string& at, std::vector<std::string>& unowned,
                std::set<std::string>& seen) {
  if (!at.empty()) {
    seen.insert(at);
    if (OwnerOf(at)) return;
  }
  auto props = node.find("properties");
  if (props == node.end() || props->empty()) {
    unowned.push_back(at);
    return;
  }
  for (auto it = props->begin(); it != props->end(); ++it)
    WalkSchema(it.value(), at + "/" + it.key(), unowned, seen);
}

}  // namespace

TEST_CASE("registry: names are unique, known to FindModule, and After() names exist") {
  std::set<std::string> names;
  for (const Module* m : AllModules()) {
    CHECK(names.insert(std::string(m->Name())).second);
    CHECK(FindModule(m->Name()) == m);
  }
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

TEST_CASE("registry: each desired key has one owner, and the stack schema allows exactly those") {
  // No two modules own the same pointer (nor one inside another's).
  std::map<std::string, std::string> owner;
  for (const Module* m : AllModules())
    for (std::string_view p : m->Info().owns) {
      CHECK_MESSAGE(OwnerOf(p) == m, std::string(p));
      CHECK_MESSAGE(owner.emplace(std::string(p), std::string(m->Name())).second, std::string(p));
    }
  // What a stack file may pin is what some module checks: a schema path nobody owns would
  // validate and then never be compared (fabric.roce was), and an owned path the schema
  // refuses could never be pinned.
  std::vector<std::string> unowned;
  std::set<std::string> seen;
  WalkSchema(Embedded("stack.schema.json"), "", unowned, seen);
  for (const std::string& p : unowned) FAIL_CHECK("the stack schema allows " << p << ", which no module checks");
  for (const auto& path_module : owner)
    CHECK_MESSAGE(seen.count(path_module.first),
                  path_module.first << " (" << path_module.second << ") is not in the stack schema");
}

TEST_CASE("registry: every module has a facts schema, and the BMC list is the registry's") {
  for (const Module* m : AllModules())
    CHECK_MESSAGE(plumb::schemas::FindEmbedded("facts/" + std::string(m->Name()) + ".schema.json").has_value(),
                  std::string(m->Name()));
  std::vector<const Module*> bmc;
  for (const Module* m : AllModules())
    if (m->Info().channel == Channel::kBmc) bmc.push_back(m);
  CHECK(BmcModules() == bmc);
  CHECK_FALSE(bmc.empty());
}

TEST_CASE("registry: Wants comes from what a module owns") {
  const Module* driver = FindModule("nvidia_driver");
  REQUIRE(driver);
  CHECK(driver->Wants({{"nvidia", {{"driver", "550.90.07"}}}}));
  CHECK(driver->Wants({{"nvidia", {{"persistence_mode", false}}}}));
  CHECK_FALSE(driver->Wants({{"nvidia", {{"cuda", "12.4.1"}}}}));
  CHECK_FALSE(FindModule("sysctl")->Wants({{"sysctl", nlohmann::json::object()}}));
  CHECK(OwnerOf("/nvidia/cuda") == FindModule("cuda"));
  CHECK(OwnerOf("/sysctl/vm.swappiness") == FindModule("sysctl"));
  CHECK(OwnerOf("/firmware_images/BMC") == FindModule("firmware"));
  CHECK(OwnerOf("/nvidia") == nullptr);
  CHECK(OwnerOf("/fabric") == nullptr);   // a parent of owned keys is not owned
}

TEST_CASE("registry: each key's disruption is declared by the module that owns the key") {
  for (const Module* m : AllModules()) {
    const ModuleInfo& info = m->Info();
    CAPTURE(std::string(info.name));
    // An override names a key of the module's own ("*" stands for one segment, e.g. a unit).
    for (const auto& k : info.disruption_by_key) {
      std::string concrete(k.prefix);
      for (size_t at; (at = concrete.find("/*")) != std::string::npos;) concrete.replace(at, 2, "/x");
      CHECK_MESSAGE(info.Owns(concrete), std::string(k.prefix));
      CHECK(info.DisruptionOf(concrete + "/below") == k.disruption);
    }
    for (std::string_view own : info.owns)
      if (info.disruption_by_key.empty()) CHECK(info.DisruptionOf(own) == info.disruption);
  }
  const ModuleInfo& nvidia = FindModule("nvidia_driver")->Info();
  CHECK(nvidia.DisruptionOf("/nvidia/driver") == Disruption::kReboot);
  CHECK(nvidia.DisruptionOf("/nvidia/fabricmanager") == Disruption::kDrain);
  CHECK(nvidia.DisruptionOf("/nvidia/persistence_mode") == Disruption::kNone);
  CHECK(nvidia.DisruptionText() == "reboot; fabricmanager: drain; persistence_mode: none");
  const ModuleInfo& services = FindModule("services")->Info();
  CHECK(services.DisruptionOf("/services/nvidia-dcgm/enabled") == Disruption::kNone);
  CHECK(services.DisruptionOf("/services/nvidia-dcgm/active") == Disruption::kServiceRestart);
  CHECK(services.DisruptionOf("/services/enabled") == Disruption::kServiceRestart);   // a unit named "enabled"
  CHECK(FindModule("os")->Info().DisruptionText() == "-");
  CHECK(FindModule("kernel")->Info().DisruptionText() == "reboot");
}
