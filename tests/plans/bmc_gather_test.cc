#include "plans/bmc_gather.h"

#include "modules/transport/redfish_client.h"

#include <doctest/doctest.h>

#include "fakes/fake_redfish.h"
#include "fakes/forward_http.h"
#include "modules/bmc_modules.h"

namespace plumb::plans {

TEST_CASE("bmc gather: every target read in order, unreachable ones reported, all logged out") {
  std::vector<std::unique_ptr<testing::FakeRedfish>> fakes;
  std::vector<BmcTarget> targets;
  for (int i = 0; i < 5; ++i) {
    std::string origin = "https://bmc" + std::to_string(i) + ".example";
    auto f = std::make_unique<testing::FakeRedfish>(origin);
    f->AddSystem({"On", "ForceOff"});
    fakes.push_back(std::move(f));
    targets.push_back({"n" + std::to_string(i), origin, ""});
  }
  // n3's BMC does not answer at all.
  fakes[3]->script["GET /redfish/v1/"].assign(8, Diagnostic::Error("http.connect", "refused"));
  const std::vector<const modules::Module*>& ptrs = modules::BmcModules();
  auto obs = GatherBmc(targets, ptrs, 3, [&](const BmcTarget& t) -> std::unique_ptr<transport::Bmc> {
    size_t i = static_cast<size_t>(t.node[1] - '0');
    transport::RedfishOptions o;
    o.base_url = t.url;
    o.credentials = {"admin", transport::Secret("s3cret-PLANTED")};
    o.sleep = [](std::chrono::milliseconds) {};
    return std::make_unique<transport::RedfishClient>(
        std::make_unique<testing::ForwardHttp>(fakes[i].get()), o);
  });
  REQUIRE(obs.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    CHECK(obs[i].node == targets[i].node);
    if (i == 3) {
      CHECK_FALSE(obs[i].reachable);
      CHECK(obs[i].error.code == "http.connect");
      continue;
    }
    CHECK(obs[i].reachable);
    REQUIRE(obs[i].facts.count("power") == 1);
    CHECK(obs[i].facts.at("power").ok());
    CHECK(obs[i].facts.at("power").value()["power_state"] == "On");
    // No UpdateService in this fake: firmware is a per-module error, not a lost node.
    CHECK_FALSE(obs[i].facts.at("firmware").ok());
    CHECK(fakes[i]->sessions_created == 1);
    CHECK(fakes[i]->sessions_deleted == 1);
  }
  auto j = ToJson(obs[0]);
  CHECK(j["facts"]["power"]["power_state"] == "On");
  CHECK(j["errors"].contains("firmware"));
  CHECK(ToJson(obs[3])["error"]["code"] == "http.connect");
}

}  // namespace plumb::plans

namespace plumb {

TEST_CASE("bmc gather: BMC facts join the nodes read in-band; an unreachable BMC is each BMC module's error") {
  const auto& mods = modules::BmcModules();
  REQUIRE(!mods.empty());
  plans::ObservedState observed;
  for (const char* n : {"n1", "n2", "n3"}) {
    plans::NodeObservation o;
    o.node = n;
    o.reachable = std::string(n) != "n2";
    o.facts_digest = std::string("sha256:inband-") + n;
    observed.nodes[n] = o;
  }
  std::vector<plans::BmcObservation> bmc(3);
  bmc[0].node = "n1";
  bmc[0].reachable = true;
  bmc[0].facts.emplace("firmware", Result<modules::Facts>(nlohmann::json{{"BMC", "1.0"}}));
  bmc[1].node = "n2";   // its OS was not read: the plan leaves it out whole, BMC facts or not
  bmc[1].reachable = true;
  bmc[1].facts.emplace("firmware", Result<modules::Facts>(nlohmann::json{{"BMC", "1.0"}}));
  bmc[2].node = "n3";
  bmc[2].error = Diagnostic::Error("redfish.connect", "connection refused");
  plans::MergeBmcObservations(std::move(bmc), mods, observed);

  REQUIRE(observed.nodes["n1"].facts.count("firmware") == 1);
  CHECK(observed.nodes["n1"].facts.at("firmware").ok());
  CHECK(observed.nodes["n1"].facts_digest == "sha256:inband-n1");   // the in-band digest stays
  CHECK(observed.nodes["n2"].facts.empty());
  for (const modules::Module* m : mods) {
    CAPTURE(std::string(m->Name()));
    auto it = observed.nodes["n3"].facts.find(std::string(m->Name()));
    REQUIRE(it != observed.nodes["n3"].facts.end());
    REQUIRE_FALSE(it->second.ok());
    CHECK(it->second.error().message == "BMC unreachable: connection refused");
  }
  // Targets: only nodes that name a BMC.
  inventory::Node a, b;
  a.name = "a";
  a.bmc = "https://127.0.0.1:8443";
  a.bmc_system = "System.Embedded.1";
  b.name = "b";
  auto targets = plans::BmcTargetsOf({&a, &b});
  REQUIRE(targets.size() == 1);
  CHECK(targets[0].node == "a");
  CHECK(targets[0].system == "System.Embedded.1");
}

}  // namespace plumb
