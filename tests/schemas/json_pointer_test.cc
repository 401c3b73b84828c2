// JSON pointers (schemas/json_pointer.h): the one escaping of a token, and the pointer <-> key
// conversions every layer uses.
#include <doctest/doctest.h>

#include "schemas/json_pointer.h"

using namespace plumb::schemas;
using V = std::vector<std::string>;

TEST_CASE("json pointer: a token's '~' and '/' are escaped, and read back") {
  CHECK(PointerToken("plain") == "plain");
  CHECK(PointerToken("a/b~c") == "a~1b~0c");
  CHECK(PointerToken("~1") == "~01");   // '~' first: "~1" is a token, not a slash
  CHECK(PointerAppend("/packages", "a/b") == "/packages/a~1b");
  CHECK(PointerAppend("/x", 3) == "/x/3");
  CHECK(PointerTokens("/packages/a~1b~0c/~01") == V{"packages", "a/b~c", "~1"});
  // What this escaping writes is what nlohmann's own pointers read.
  const nlohmann::json doc = {{"a/b", {{"c~d", 1}}}};
  CHECK(doc.at(nlohmann::json::json_pointer(PointerAppend(PointerAppend("", "a/b"), "c~d"))) == 1);
}

TEST_CASE("json pointer: pointers read as dotted keys; under a prefix") {
  CHECK(PointerToKey("/nvidia/driver") == "nvidia.driver");
  CHECK(PointerToKey("/sysctl/net.core.rmem_max") == "sysctl.net.core.rmem_max");
  CHECK(PointerToKey("/packages/a~1b~0c") == "packages.a/b~c");
  CHECK(PointerToKey("") == "");
  CHECK(PointerUnder("/a/b", "/a"));
  CHECK(PointerUnder("/a", "/a"));
  CHECK(PointerUnder("/a", ""));
  CHECK_FALSE(PointerUnder("/ab", "/a"));
  CHECK_FALSE(PointerUnder("/a", "/a/b"));
}
