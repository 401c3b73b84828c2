// Desired-state keys: JSON pointers as the cluster repo's YAML and the waivers write them.
#include <doctest/doctest.h>

#include "plans/plan/keys.h"

using plumb::plans::GlobMatch;
using plumb::plans::LeafPointers;
using plumb::plans::PointerToKey;
using plumb::plans::PointerUnder;
using V = std::vector<std::string>;

TEST_CASE("keys: pointers read as dotted keys and map to their module") {
  CHECK(PointerToKey("/nvidia/driver") == "nvidia.driver");
  CHECK(PointerToKey("/sysctl/net.core.rmem_max") == "sysctl.net.core.rmem_max");
  CHECK(PointerToKey("/packages/a~1b~0c") == "packages.a/b~c");
  CHECK(PointerUnder("/a/b", "/a"));
  CHECK_FALSE(PointerUnder("/ab", "/a"));
  nlohmann::json doc = {{"a", {{"x/y", 1}, {"e", nlohmann::json::object()}}}, {"b", {1, 2}}};
  CHECK(LeafPointers(doc) == V{"/a/e", "/a/x~1y", "/b"});
  CHECK(GlobMatch("sysctl.*", "sysctl.vm.swappiness"));
  CHECK(GlobMatch("gpu00[1-4]", "gpu003"));
  CHECK_FALSE(GlobMatch("gpu00[1-4]", "gpu005"));
}
