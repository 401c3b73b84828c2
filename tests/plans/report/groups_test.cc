// Nodes alike shown once (plans/report/groups.h): groups in the order their key first came,
// members in the order they were added.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "plans/report/groups.h"

using plumb::plans::report::GroupsInOrder;

TEST_CASE("groups: first-seen order of keys, added order of members") {
  GroupsInOrder<std::string> g;
  CHECK(g.empty());
  g.Add("b-lines", "gpu003");
  g.Add("a-lines", "gpu001");
  g.Add("b-lines", "gpu002");
  g.Add("a-lines", "gpu004");
  g.Add("c-lines", "gpu005");
  REQUIRE(g.groups().size() == 3);
  CHECK(g.groups()[0].key == "b-lines");   // not sorted: the first node's place
  CHECK(g.groups()[0].members == std::vector<std::string>{"gpu003", "gpu002"});
  CHECK(g.groups()[1].key == "a-lines");
  CHECK(g.groups()[1].members == std::vector<std::string>{"gpu001", "gpu004"});
  CHECK(g.groups()[2].members == std::vector<std::string>{"gpu005"});
}
