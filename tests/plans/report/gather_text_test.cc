// What `plumb gather` prints (plans/report/gather_text): the table, its closing count, the
// summary object, and the compact line of a module's facts.
#include <doctest/doctest.h>

#include <string>

#include "plans/report/gather_text.h"

using namespace plumb;
using nlohmann::json;

namespace {

plans::ObservedState TwoReadOneNot() {
  plans::ObservedState s;
  plans::NodeObservation& a = s.nodes["gpu001"];
  a.node = "gpu001";
  a.reachable = true;
  a.elapsed_s = 0.25;
  a.facts.emplace("kernel", Result<modules::Facts>(json{{"release", "5.15"}, {"mods", json::array({1, 2})}}));
  plans::NodeObservation& b = s.nodes["gpu002"];
  b.node = "gpu002";
  b.reachable = true;
  b.elapsed_s = 1.5;
  b.facts.emplace("nvidia", Result<modules::Facts>(Diagnostic::Error("probe.nvidia", "no nvidia-smi")));
  plans::NodeObservation& c = s.nodes["gpu003"];
  c.node = "gpu003";
  c.reachable = false;
  c.error = Diagnostic::Error("ssh.hostkey-changed", "host key differs", {}, {}, "check the node");
  return s;
}

}  // namespace

TEST_CASE("gather text: each node's modules, the unreadable with reason and hint, one count") {
  CHECK(plans::report::GatherText(TwoReadOneNot(), 2.04) ==
        "gpu001  0.25s\n"
        "  kernel          mods[2] release=5.15\n"
        "gpu002  1.50s  (1 module error)\n"
        "  nvidia          ERROR probe.nvidia: no nvidia-smi\n"
        "\nunreadable nodes:\n"
        "  gpu003  [host key changed] host key differs\n"
        "      hint: check the node\n"
        "\ngathered 3 nodes in 2.0s: 2 read (1 with module errors), 1 unreadable "
        "(1 host key changed)\n");
}

TEST_CASE("gather text: one node read whole says so in the singular") {
  plans::ObservedState s = TwoReadOneNot();
  s.nodes.erase("gpu002");
  s.nodes.erase("gpu003");
  CHECK(plans::report::GatherText(s, 0.5) ==
        "gpu001  0.25s\n  kernel          mods[2] release=5.15\n"
        "\ngathered 1 node in 0.5s: 1 read, 0 unreadable\n");
}

TEST_CASE("gather summary: counts, reasons by node, wall time") {
  json j = plans::report::GatherSummaryJson(TwoReadOneNot(), 3.0);
  CHECK(j == json{{"nodes", 3}, {"read", 2}, {"unreadable", 1}, {"module_errors", 1},
                  {"reasons", {{"gpu003", "host key changed"}}}, {"wall_s", 3.0}});
}

TEST_CASE("gather: an unreadable node's reason in a word") {
  using plans::report::UnreadableReason;
  CHECK(UnreadableReason(Diagnostic::Error("ssh.refused", "x")) == "refused");
  CHECK(UnreadableReason(Diagnostic::Error("ssh.auth", "x")) == "auth");
  CHECK(UnreadableReason(Diagnostic::Error("probe.timeout", "x")) == "probe error");
  CHECK(UnreadableReason(Diagnostic::Error("", "x")) == "error");
  CHECK(UnreadableReason(Diagnostic::Error("local.spawn", "x")) == "local.spawn");
}

TEST_CASE("gather: a module's facts on one line, cut to the width") {
  using plans::report::CompactFacts;
  CHECK(CompactFacts(json{{"a", 1}, {"b", "x"}, {"c", json::object({{"k", 1}})}}) == "a=1 b=x c{1}");
  CHECK(CompactFacts(json::array({1, 2, 3})) == "[3]");
  CHECK(CompactFacts(json("text")) == "text");
  CHECK(CompactFacts(json{{"long", std::string(40, 'x')}}, 20) == "long=xxxxxxxxxxxx...");
}
