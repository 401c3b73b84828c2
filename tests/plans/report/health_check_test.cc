// CheckHealth: `plumb health`'s run over the selected nodes, real /bin/sh shells standing in for
// SSH; what the scheduler says holds the checks that load every GPU on a busy node.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <atomic>

#include "modules/check_result.h"
#include "modules/probe_script.h"
#include "modules/transport/local_shell.h"
#include "plans/report/health_report.h"
#include "plans/report/report_fixture.h"

using namespace plumb;
using nlohmann::json;

namespace {

// An on-demand health module (like dcgm): prints 1, passes when that is at most /health/load/max.
class LoadCheckModule final : public modules::Module {
 public:
  LoadCheckModule() {
    info_.name = "load";
    info_.owns = {"/health/load"};
    info_.kind = modules::ModuleInfo::Kind::kHealth;
    info_.on_demand = true;
  }
  const modules::ModuleInfo& Info() const override { return info_; }
  std::string CheckScript(const json&) const override { return "plumb_run value printf '%s' 1"; }
  Result<modules::Facts> ParseProbe(std::string_view out, int) const override {
    auto parts = modules::ParseFramedParts(out);
    if (!parts) return parts.error();
    const modules::ProbePart* p = modules::FindPart(*parts, "value");
    if (!p) return Diagnostic::Error("probe.load", "no value");
    return json{{"value", std::stoi(p->text)}};
  }
  std::vector<modules::Action> Diff(const json&, const modules::Facts&) const override { return {}; }
  std::vector<modules::CheckResult> Checks(const json& desired, const modules::Facts& facts) const override {
    const int max = desired["health"]["load"].value("max", 0);
    const int v = facts.value("value", -1);
    return {{"load", "load.value", "load", "GPU 0",
             v <= max ? modules::CheckStatus::kPass : modules::CheckStatus::kFail, v, {{"max", max}}, ""}};
  }

 private:
  modules::ModuleInfo info_;
};

class Sh final : public plans::ShellFactory {
 public:
  std::unique_ptr<transport::Shell> Open(const inventory::Node&) override {
    ++opened;
    return std::make_unique<transport::LocalShell>();
  }
  std::atomic<int> opened{0};   // RunHealth opens shells from its worker threads
};

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
