// The engine's re-probe (plans/rollout/gather_prober): a node's observation as the planner's
// facts, and what the prober reads (or does not) for a node.
#include <doctest/doctest.h>

#include "fakes/fake_shell.h"
#include "plans/rollout/gather_prober.h"

using namespace plumb;

namespace {

// Hands out one FakeShell per Open (it answers no command); counts the opens.
struct FailingShells : plans::ShellFactory {
  std::unique_ptr<transport::Shell> Open(const inventory::Node& node) override {
    opened.push_back(node.name);
    auto s = std::make_unique<testing::FakeShell>();
    return s;
  }
  std::vector<std::string> opened;
};

}  // namespace

TEST_CASE("ToFacts: an unreachable node is unreadable with its code and message") {
  plans::NodeObservation o;
  o.reachable = false;
  o.error = Diagnostic::Error("ssh.refused", "connection refused");
  plans::NodeFacts f = plans::ToFacts(o);
  CHECK_FALSE(f.readable);
  CHECK(f.unreadable_reason == "ssh.refused: connection refused");
  o.error.code.clear();
  CHECK(plans::ToFacts(o).unreadable_reason == "connection refused");
}

TEST_CASE("ToFacts: a module that failed is an error, the others' facts and the digest carry over") {
  plans::NodeObservation o;
  o.reachable = true;
  o.facts.emplace("kernel", modules::Facts{{"release", "6.8.0"}});
  o.facts.emplace("sysctl", Result<modules::Facts>(Diagnostic::Error("probe.sysctl", "no output")));
  o.facts_digest = "sha256:abc";
  plans::NodeFacts f = plans::ToFacts(o);
  CHECK(f.readable);
  CHECK(f.facts.at("kernel").at("release") == "6.8.0");
  CHECK_FALSE(f.facts.contains("sysctl"));
  REQUIRE(f.module_errors.count("sysctl") == 1);
  CHECK(f.module_errors.at("sysctl").find("no output") != std::string::npos);
  CHECK(f.module_errors.count("kernel") == 0);
  CHECK(f.facts_digest == "sha256:abc");
}

TEST_CASE("GatherProber: a node not in the inventory is unreadable without opening a shell or a BMC") {
  inventory::Cluster c;
  inventory::Node n;
  n.name = "gpu001";
  n.bmc = "https://127.0.0.1:8443";
  c.nodes.push_back(n);
  FailingShells shells;
  int bmc_opens = 0;
  std::map<std::string, nlohmann::json> desired = {{"gpu001", nlohmann::json::object()}};
  plans::GatherProber prober(c, shells, {}, std::chrono::seconds(5),
                             [&](const plans::BmcTarget&) -> std::unique_ptr<transport::Bmc> {
                               ++bmc_opens;
                               return nullptr;
                             },
                             &desired);
  plans::NodeFacts f = prober.Probe("gpu999");
  CHECK_FALSE(f.readable);
  CHECK(f.unreadable_reason == "not in the inventory");
  CHECK(shells.opened.empty());
  // A node of the inventory is read over its own shell; no module pins a BMC read, so no BMC.
  prober.Probe("gpu001");
  CHECK(shells.opened == std::vector<std::string>{"gpu001"});
  CHECK(bmc_opens == 0);
}
