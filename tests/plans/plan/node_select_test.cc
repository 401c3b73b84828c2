// --limit: globs, comma lists, @groups through parents, exclusions, and loud no-match errors.
#include <doctest/doctest.h>

#include "plans/plan/node_select.h"

using namespace plumb;

namespace {
inventory::Cluster Pod() {
  inventory::Cluster c;
  auto add = [&](std::string name, std::vector<std::string> groups) {
    inventory::Node n;
    n.name = std::move(name);
    n.address = n.name + ".pod-a.example";
    n.groups = std::move(groups);
    c.nodes.push_back(std::move(n));
  };
  add("gpu001", {"h100"});
  add("gpu002", {"h100"});
  add("gpu003", {"a100"});
  add("gpu010", {"h100", "canary"});
  add("login1", {});
  inventory::Group gpu;
  gpu.name = "gpu";
  inventory::Group h100;
  h100.name = "h100";
  h100.parents = {"gpu"};
  inventory::Group a100;
  a100.name = "a100";
  a100.parents = {"gpu"};
  c.groups = {{"gpu", gpu}, {"h100", h100}, {"a100", a100}};
  return c;
}

std::string Names(const Result<std::vector<const inventory::Node*>>& r) {
  REQUIRE(r.ok());
  std::string s;
  for (const auto* n : r.value()) s += (s.empty() ? "" : ",") + n->name;
  return s;
}
}  // namespace

TEST_CASE("--limit selects by glob, list, group and exclusion, in inventory order") {
  auto c = Pod();
  CHECK(Names(plans::SelectNodes(c, "")) == "gpu001,gpu002,gpu003,gpu010,login1");
  CHECK(Names(plans::SelectNodes(c, "gpu00[1-2]")) == "gpu001,gpu002");
  CHECK(Names(plans::SelectNodes(c, "login1, gpu003")) == "gpu003,login1");
  CHECK(Names(plans::SelectNodes(c, "@h100")) == "gpu001,gpu002,gpu010");
  CHECK(Names(plans::SelectNodes(c, "@gpu")) == "gpu001,gpu002,gpu003,gpu010");  // via parents
  CHECK(Names(plans::SelectNodes(c, "@gpu,!@canary,!gpu002")) == "gpu001,gpu003");
  CHECK(Names(plans::SelectNodes(c, "!gpu*")) == "login1");
  CHECK(Names(plans::SelectNodes(c, "@canary")) == "gpu010");  // a group only nodes name
}

TEST_CASE("a --limit term that matches nothing is an error naming it") {
  auto c = Pod();
  auto typo = plans::SelectNodes(c, "gpu001,gpu9*");
  REQUIRE(!typo.ok());
  CHECK(typo.error().code == "limit.no-match");
  CHECK(typo.error().message.find("gpu9*") != std::string::npos);
  auto group = plans::SelectNodes(c, "@b200");
  REQUIRE(!group.ok());
  CHECK(group.error().message.find("b200") != std::string::npos);
}

TEST_CASE("a --limit given that names no node is an error, not every node") {
  auto c = Pod();
  for (const char* empty : {" ", ",", ", ,", "!", "!,!", " ! "}) {
    CAPTURE(empty);
    auto s = plans::SelectNodes(c, empty);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == "limit.empty");
    CHECK(s.error().message.find("names no node") != std::string::npos);
    CHECK(s.error().hint.find("leave --limit out") != std::string::npos);
    CHECK(plans::LimitNamesNoNode(empty).has_value());
  }
  auto all = plans::SelectNodes(c, "");   // no --limit (the caller passes ""): every node
  REQUIRE(all.ok());
  CHECK(all->size() == c.nodes.size());
  CHECK(plans::LimitNamesNoNode("").has_value());   // but "" given on a command line names none
  CHECK_FALSE(plans::LimitNamesNoNode("gpu001,!").has_value());
}

TEST_CASE("--limit: host lists with commas inside brackets, as plumb prints them") {
  inventory::Cluster c = Pod();
  CHECK(Names(plans::SelectNodes(c, "gpu[001-002,010]")) == "gpu001,gpu002,gpu010");
  CHECK(Names(plans::SelectNodes(c, "gpu[001-003],!gpu[002,003]")) == "gpu001");
  auto none = plans::SelectNodes(c, "gpu[004-009]");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("gpu[004-009]") != std::string::npos);
}
