#include <doctest/doctest.h>

#include "inventory/hostlist.h"

using namespace plumb::inventory;
using V = std::vector<std::string>;

TEST_CASE("hostlist: compress keeps zero padding and writes Slurm ranges") {
  CHECK(CompressHostlist({}) == "");
  CHECK(CompressHostlist({"gpu001"}) == "gpu001");
  CHECK(CompressHostlist({"gpu003", "gpu001", "gpu002", "gpu002"}) == "gpu[001-003]");
  CHECK(CompressHostlist({"gpu001", "gpu002", "gpu004", "gpu007", "gpu008"}) ==
        "gpu[001-002,004,007-008]");
  // Different widths are different groups: gpu9 is not gpu009.
  CHECK(CompressHostlist({"gpu9", "gpu10", "gpu009"}) == "gpu009,gpu[9-10]");
  CHECK(CompressHostlist({"login", "gpu01", "cpu1", "cpu2"}) == "cpu[1-2],gpu01,login");
  CHECK(CompressHostlist({"gpu08", "gpu09", "gpu10", "gpu11"}) == "gpu[08-11]");
  CHECK(CompressHostlist({"n0", "n1", "n2"}) == "n[0-2]");
}

TEST_CASE("hostlist: expand is the inverse of compress") {
  V names;
  for (int i = 1; i <= 40; ++i)
    if (i % 7) names.push_back("n" + std::string(i < 10 ? "0" : "") + std::to_string(i));
  auto back = ExpandHostlist(CompressHostlist(names));
  REQUIRE(back);
  CHECK(*back == names);
  CHECK(*ExpandHostlist("gpu[001-003,007],cpu1") == V{"gpu001", "gpu002", "gpu003", "gpu007", "cpu1"});
  CHECK(*ExpandHostlist("r[1-2]-sw") == V{"r1-sw", "r2-sw"});
}

TEST_CASE("hostlist: malformed lists are rejected, not guessed") {
  CHECK_FALSE(ExpandHostlist("gpu[001-003"));
  CHECK_FALSE(ExpandHostlist("gpu[3-1]"));
  CHECK_FALSE(ExpandHostlist("gpu[a-b]"));
  CHECK_FALSE(ExpandHostlist("gpu]1["));
  CHECK_FALSE(ExpandHostlist("a,,b"));
  CHECK_FALSE(ExpandHostlist("n[1-99999999]", 1000));
}

TEST_CASE("hostlist: one reader of bracket ranges, its limit a parameter") {
  CHECK(*ExpandRangeList("1-3,05", 10) == V{"1", "2", "3", "05"});
  CHECK(*ExpandRangeList("08-10", 3) == V{"08", "09", "10"});   // exactly the limit
  CHECK_FALSE(ExpandRangeList("08-10", 2));                     // one over it
  CHECK_FALSE(ExpandRangeList("", 10));
  CHECK_FALSE(ExpandRangeList("1,,2", 10));
  CHECK_FALSE(ExpandRangeList("1-2-3", 10));
  CHECK_FALSE(ExpandRangeList("a-c", 10));                      // a glob class, not a range
  CHECK_FALSE(ExpandRangeList("1234567890123456789", 10));      // 19 digits
  // A host list's limit counts every name of the list, not one bracket's.
  CHECK(*ExpandHostlist("a,n[1-3]", 4) == V{"a", "n1", "n2", "n3"});
  CHECK_FALSE(ExpandHostlist("a,b,n[1-3]", 4));
}
