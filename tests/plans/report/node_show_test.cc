// `plumb show NODE`: one node's desired state, each leaf with where it came from.
#include <doctest/doctest.h>

#include <sstream>

#include "plans/report/node_show.h"
#include "plans/report/report_fixture.h"
#include "schemas/exit_codes.h"

using namespace plumb;

TEST_CASE("node show: every leaf, sorted by key, aligned, with its file:line and layer") {
  testing::ReportWorld w;
  inventory::NodeDesired& nd = w.desired["gpu001"];
  nd.groups = {"all", "h100"};
  nd.stack_from = "h100";
  nd.layers = std::map<std::string, std::string>{{"/kernel", "stack h100"},
                                                 {"/sysctl/vm.swappiness", "group h100"}};
  inventory::Node& node = w.cluster.nodes[0];
  node.address = "10.0.0.1";
  node.bmc = "https://bmc1";
  const std::string text = plans::report::NodeShowText(w.cluster, node, nd);
  CHECK(text.find("node gpu001 (10.0.0.1) in cluster pod-a at cccccccccccc (ref main)\n") == 0);
  CHECK(text.find("  bmc         https://bmc1\n") != std::string::npos);
  CHECK(text.find("  domains     rack=r01 leaf=- nvlink_domain=-\n") != std::string::npos);
  CHECK(text.find("  merge order all -> h100  (later wins)\n") != std::string::npos);
  CHECK(text.find("  stack       h100  (from group h100, ?)\n") != std::string::npos);
  // Keys padded to the longest, values to the longest value: the columns line up.
  const size_t k = text.find("\n  kernel ");
  const size_t sw = text.find("\n  sysctl.vm.swappiness ");
  REQUIRE(k != std::string::npos);
  REQUIRE(sw != std::string::npos);
  const std::string kernel_line = text.substr(k + 1, text.find('\n', k + 1) - k - 1);
  const std::string sw_line = text.substr(sw + 1, text.find('\n', sw + 1) - sw - 1);
  CHECK(kernel_line.find("5.15.0-119-generic") == sw_line.find("10 "));
  CHECK(kernel_line.find("5.15.0-119-generic  stacks/h100.yaml:1:9  (stack h100)") != std::string::npos);
  CHECK(kernel_line.find("stacks/") == sw_line.find("stacks/"));
  CHECK(sw_line.substr(sw_line.find("stacks/")) == "stacks/h100.yaml:4:34  (group h100)");
  const nlohmann::json j = plans::report::NodeShowJson(w.cluster, node, nd);
  CHECK(j["node"] == "gpu001");
  CHECK(j["merge_order"] == nlohmann::json::array({"all", "h100"}));
  CHECK(j["origins"]["/sysctl/vm.swappiness"]["line"] == 4);
  CHECK(j["origins"]["/sysctl/vm.swappiness"]["layer"] == "group h100");
  CHECK(j["desired"]["kernel"] == "5.15.0-119-generic");
}

TEST_CASE("node show: the verb; an unknown node named with the nearest as a hint") {
  testing::ReportWorld w;
  inventory::LoadedCluster lc;
  lc.cluster = w.cluster;
  lc.desired = w.desired;
  lc.diags.Add(Diagnostic::Warning("source.uncommitted", "reading uncommitted files"));
  std::ostringstream out, err;
  CHECK(plans::report::ShowNode(lc, "gpu002", "json", out, err) == ExitCodeFor("show", Outcome::kOk));
  CHECK(nlohmann::json::parse(out.str())["node"] == "gpu002");
  CHECK(err.str().empty());

  lc.cluster.source.working_tree = true;   // text of the working tree: its warnings first
  std::ostringstream text, text_err;
  CHECK(plans::report::ShowNode(lc, "gpu002", "text", text, text_err) == ExitCodeFor("show", Outcome::kOk));
  CHECK(text.str().find("node gpu002 ") == 0);
  CHECK(text_err.str().find("reading uncommitted files") != std::string::npos);

  std::ostringstream none, none_err;
  CHECK(plans::report::ShowNode(lc, "gpu0002", "text", none, none_err) == ExitCodeFor("show", Outcome::kError));
  CHECK(none.str().empty());
  CHECK(none_err.str() == "plumb: error: no node 'gpu0002' in cluster pod-a\n"
                          "  hint: did you mean 'gpu002'?\n");
}
