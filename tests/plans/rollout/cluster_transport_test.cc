// The engine's transport over a cluster's nodes (plans/rollout/cluster_transport.h): shells for
// the inventory's nodes, each node's BMC opened once, a power cycle as a hard reboot through it.
#include <doctest/doctest.h>

#include "fakes/fake_shell.h"
#include "modules/transport/bmc.h"
#include "plans/rollout/cluster_transport.h"

using namespace plumb;

namespace {

struct TransportShells : plans::ShellFactory {
  std::unique_ptr<transport::Shell> Open(const inventory::Node& node) override {
    opened.push_back(node.name);
    return std::make_unique<testing::FakeShell>();
  }
  std::vector<std::string> opened;
};

// A BMC that records its resets; every other call is an error.
class ResetOnlyBmc final : public transport::Bmc {
 public:
  explicit ResetOnlyBmc(std::vector<std::string>* resets) : resets_(resets) {}
  const std::string& Name() const override { return name_; }
  Result<nlohmann::json> ServiceRoot() override { return No(); }
  Result<nlohmann::json> Get(std::string_view) override { return No(); }
  std::vector<Result<nlohmann::json>> GetMany(const std::vector<std::string>&) override { return {}; }
  Result<transport::BmcResponse> GetRaw(std::string_view) override { return No(); }
  Result<std::vector<nlohmann::json>> GetCollection(std::string_view) override { return No(); }
  Result<std::vector<std::string>> SystemLinks() override { return No(); }
  Result<std::string> SystemLink() override { return std::string("/redfish/v1/Systems/1"); }
  Result<transport::BmcResponse> Patch(std::string_view, const nlohmann::json&) override { return No(); }
  Result<transport::TaskOutcome> PostAction(std::string_view, const nlohmann::json&,
                                            const transport::TaskWatch&) override { return No(); }
  Result<transport::TaskOutcome> PostMultipart(std::string_view, const nlohmann::json&, const std::string&,
                                               const transport::TaskWatch&) override { return No(); }
  Result<transport::TaskOutcome> FollowTaskLink(const std::string&, const std::string&,
                                                const transport::TaskWatch&) override { return No(); }
  Status Pause(std::chrono::milliseconds) override { return OkStatus(); }
  Result<std::string> Reset(std::string_view system, transport::ResetKind kind) override {
    resets_->push_back(std::string(system) +
                       (kind == transport::ResetKind::kHardReboot ? " hard-reboot" : " other"));
    return std::string("ForceRestart");
  }

 private:
  static Diagnostic No() { return Diagnostic::Error("test.bmc", "not in this test"); }
  std::string name_ = "fake";
  std::vector<std::string>* resets_;
};

inventory::Cluster TransportNodes() {
  inventory::Cluster c;
  inventory::Node a;
  a.name = "gpu001";
  a.bmc = "https://bmc1.example";
  a.bmc_system = "1";
  inventory::Node b;
  b.name = "gpu002";   // no BMC
  c.nodes = {a, b};
  return c;
}

}  // namespace

TEST_CASE("cluster_transport: a shell for a node of the inventory; an error for any other") {
  inventory::Cluster c = TransportNodes();
  TransportShells shells;
  plans::ClusterNodeTransport t(c, shells, {});
  CHECK(t.Connect("gpu002").ok());
  auto none = t.Connect("gpu009");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code == "apply.node");
  CHECK(shells.opened == std::vector<std::string>{"gpu002"});
}

TEST_CASE("cluster_transport: each node's BMC is opened once, at its URL and system") {
  inventory::Cluster c = TransportNodes();
  TransportShells shells;
  std::vector<std::string> opened, resets;
  plans::ClusterNodeTransport t(c, shells, [&](const plans::BmcTarget& target) {
    opened.push_back(target.node + " " + target.url + " " + target.system);
    return std::make_unique<ResetOnlyBmc>(&resets);
  });
  transport::Bmc* first = t.Bmc("gpu001");
  REQUIRE(first != nullptr);
  CHECK(t.Bmc("gpu001") == first);
  CHECK(t.Bmc("gpu002") == nullptr);   // no bmc: URL
  CHECK(t.Bmc("gpu009") == nullptr);   // not in the inventory
  CHECK(opened == std::vector<std::string>{"gpu001 https://bmc1.example 1"});

  CHECK(t.PowerCycle("gpu001").ok());
  CHECK(resets == std::vector<std::string>{"/redfish/v1/Systems/1 hard-reboot"});
  CHECK(opened.size() == 1);
}

TEST_CASE("cluster_transport: no BMC to power-cycle with is an error naming the node") {
  inventory::Cluster c = TransportNodes();
  TransportShells shells;
  plans::ClusterNodeTransport without_opener(c, shells, {});   // no credentials
  CHECK(without_opener.Bmc("gpu001") == nullptr);
  Status s = without_opener.PowerCycle("gpu001");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == "apply.no-bmc");
  CHECK(s.error().message == "gpu001 has no usable BMC (no bmc: URL or no credentials)");
  std::vector<std::string> resets;
  plans::ClusterNodeTransport with(c, shells, [&](const plans::BmcTarget&) {
    return std::make_unique<ResetOnlyBmc>(&resets);
  });
  CHECK(with.PowerCycle("gpu002").error().code == "apply.no-bmc");
  CHECK(resets.empty());
}

TEST_CASE("cluster_transport: the rollout's node parts are wired over the cluster's shells and BMCs") {
  inventory::LoadedCluster loaded;
  loaded.cluster = TransportNodes();
  TransportShells shells;
  std::vector<std::string> opened, resets;
  plans::ClusterRolloutParts parts(loaded, shells, [&](const plans::BmcTarget& target) {
    opened.push_back(target.node);
    return std::make_unique<ResetOnlyBmc>(&resets);
  }, {}, nullptr);
  plans::RolloutDeps deps;
  parts.Fill(deps);
  REQUIRE(deps.transport != nullptr);
  REQUIRE(deps.prober != nullptr);
  REQUIRE(deps.leases != nullptr);
  REQUIRE(deps.clock != nullptr);
  CHECK(deps.journal == nullptr);   // the caller's
  CHECK(deps.transport->Connect("gpu001").ok());
  CHECK(shells.opened == std::vector<std::string>{"gpu001"});
  CHECK(deps.transport->PowerCycle("gpu001").ok());
  CHECK(opened == std::vector<std::string>{"gpu001"});
  CHECK(resets.size() == 1);
}
