// CheckHealth: `plumb health`'s run over the selected nodes, real /bin/sh shells standing in for
// SSH; what the scheduler says holds the checks that load every GPU on a busy node.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "fakes/gpu_load_module.h"
#include "plans/report/health_report.h"
#include "plans/report/report_fixture.h"

using namespace plumb;
using nlohmann::json;

namespace {

using LoadCheckModule = fakes::GpuLoadModule;
using Sh = fakes::LocalShells;

}  // namespace

TEST_CASE("health check: the selected nodes with a desired state are checked, a busy one held") {
  testing::ReportWorld w;
  for (auto& [name, nd] : w.desired) nd.desired.Mut()["health"] = {{"load", {{"max", 3}}}};
  w.desired.erase("gpu003");   // no desired state (an invalid stack): left out
  LoadCheckModule load;
  Sh shells;
  plans::report::HealthCheckRequest req;
  req.cluster = &w.cluster;
  req.desired = &w.desired;
  req.nodes = {&w.cluster.nodes[0], &w.cluster.nodes[1], &w.cluster.nodes[2]};
  req.modules = {&load};
  req.fanout = 2;
  req.timeout = std::chrono::seconds(30);
  plans::SchedulerView view;
  view.nodes["gpu001"].running_jobs = 1;
  view.nodes["gpu001"].jobs = {"77 (bob: sweep)"};
  SUBCASE("--allow-busy: every node's checks run") {
    plans::report::HealthReport r = plans::report::CheckHealth(req, shells);
    REQUIRE(r.nodes.size() == 2);
    CHECK(r.nodes[0].checks.at(0).status == modules::CheckStatus::kPass);
    CHECK(r.nodes[1].checks.at(0).status == modules::CheckStatus::kPass);
    CHECK(shells.opened == 2);
  }
  SUBCASE("a node running jobs: its GPU-loading checks are skipped, with the jobs named") {
    req.busy = &view;
    plans::report::HealthReport r = plans::report::CheckHealth(req, shells);
    REQUIRE(r.nodes.size() == 2);
    CHECK(r.nodes[0].node == "gpu001");
    CHECK(r.nodes[0].checks.at(0).status == modules::CheckStatus::kSkip);
    CHECK(r.nodes[0].checks.at(0).message.find("77 (bob: sweep)") != std::string::npos);
    CHECK(r.nodes[1].checks.at(0).status == modules::CheckStatus::kPass);
  }
  plans::report::HealthReport r = plans::report::CheckHealth(req, shells);
  CHECK(r.cluster == "pod-a");
  CHECK(r.commit == std::string(40, 'c'));
}
