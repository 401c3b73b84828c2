// Desired-state keys: JSON pointers as the cluster repo's YAML and the waivers write them
// (their conversions to keys: tests/schemas/json_pointer_test.cc).
#include <doctest/doctest.h>

#include "plans/plan/keys.h"

using plumb::plans::GlobMatch;
using plumb::plans::LeafPointers;
using V = std::vector<std::string>;

TEST_CASE("keys: every leaf's pointer, escaped; globs over keys") {
  nlohmann::json doc = {{"a", {{"x/y", 1}, {"e", nlohmann::json::object()}}}, {"b", {1, 2}}};
  CHECK(LeafPointers(doc) == V{"/a/e", "/a/x~1y", "/b"});
  CHECK(GlobMatch("sysctl.*", "sysctl.vm.swappiness"));
  CHECK(GlobMatch("gpu00[1-4]", "gpu003"));
  CHECK_FALSE(GlobMatch("gpu00[1-4]", "gpu005"));
}
