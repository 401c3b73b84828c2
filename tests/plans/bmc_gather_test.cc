#include "plans/bmc_gather.h"

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
