// `plumb health` over fakes (plans/report/health_command): refusals before anything is read,
// the scheduler asked unless --allow-busy, the report and its exit code, the progress lines.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <sstream>

#include "fakes/gpu_load_module.h"
#include "plans/report/health_command.h"
#include "plans/report/report_fixture.h"
#include "schemas/exit_codes.h"

using namespace plumb;
using nlohmann::json;

namespace {

using fakes::GpuLoadModule;
using fakes::LocalShells;

struct HealthWorld {
  testing::ReportWorld w;
  GpuLoadModule load;
  int scheduler_reads = 0;
  std::atomic<int> shells_made{0};
  bool load_ok = true;
  plans::report::HealthSources src;
  std::ostringstream out, err;
  explicit HealthWorld(int max) {
    for (auto& [name, nd] : w.desired) nd.desired.Mut()["health"] = {{"load", {{"max", max}}}};
    src.load = [this] {
      inventory::LoadedCluster lc;
      lc.cluster = w.cluster;
      lc.desired = w.desired;
      if (!load_ok) lc.diags.Add(Diagnostic::Error("schema.type", "bad", {"inventory.yaml", 2, 1}));
      return lc;
    };
    src.load_failure = [](const inventory::LoadedCluster&) {
      return Diagnostic::Error("repo.invalid", "the cluster repo pod-a at main is invalid (1 error)");
    };
    src.schedulers = [this](const inventory::Cluster&) {
      ++scheduler_reads;
      return plans::SchedulerView{};
    };
    src.shells = [this](const inventory::Cluster&) -> std::unique_ptr<plans::ShellFactory> {
      ++shells_made;
      return std::make_unique<LocalShells>();
    };
    src.modules = {&load};
    src.elapsed_s = [] { return 2.0; };
    src.now_unix = [] { return 1764000000LL; };
  }
  int Run(plans::report::HealthCommandRequest req) {
    req.timeout_s = 60;
    return plans::report::RunHealthCommand(req, src, out, err);
  }
};

}  // namespace

TEST_CASE("health command: every selected node checked after the scheduler is read") {
  HealthWorld t(3);
  plans::report::HealthCommandRequest req;
  req.limit = "gpu001,gpu002";
  req.format = "json";
  CHECK(t.Run(req) == ExitCodeFor("health", Outcome::kOk));
  CHECK(t.scheduler_reads == 1);
  CHECK(t.shells_made == 1);
  json j = json::parse(t.out.str());
  CHECK(j.dump().find("gpu001") != std::string::npos);
  CHECK(j.dump().find("gpu003") == std::string::npos);
}

TEST_CASE("health command: a failed check is unhealthy; --allow-busy reads no scheduler") {
  HealthWorld t(0);
  plans::report::HealthCommandRequest req;
  req.allow_busy = true;
  req.limit = "gpu001";
  t.src.style = [](std::string text) { return "[" + text + "]"; };
  CHECK(t.Run(req) == ExitCodeFor("health", Outcome::kUnhealthy));
  CHECK(t.scheduler_reads == 0);
  CHECK(t.out.str().front() == '[');   // the text report, styled
}

TEST_CASE("health command: refused or failed before any node is contacted") {
  HealthWorld t(3);
  plans::report::HealthCommandRequest req;
  SUBCASE("--fanout 0") {
    req.fanout = 0;
    CHECK(t.Run(req) == ExitCodeFor("health", Outcome::kRefused));
    CHECK(t.err.str() == "error: --fanout and --timeout must be at least 1\n");
  }
  SUBCASE("a --limit naming no node") {
    req.limit = "cpu*";
    CHECK(t.Run(req) == ExitCodeFor("health", Outcome::kRefused));
  }
  SUBCASE("an invalid repo") {
    t.load_ok = false;
    CHECK(t.Run(req) == ExitCodeFor("health", Outcome::kError));
    CHECK(t.err.str().find("plumb health: error: the cluster repo pod-a at main is invalid") != std::string::npos);
  }
  CHECK(t.shells_made == 0);
  CHECK(t.scheduler_reads == 0);
  CHECK(t.out.str().empty());
}

TEST_CASE("health progress: rewritten on a terminal; in a log only the nodes that failed") {
  auto drawn = [](bool tty) {
    std::FILE* f = std::tmpfile();
    REQUIRE(f != nullptr);
    plans::HealthProgress p = plans::report::HealthProgressTo(f, tty);
    plans::NodeHealth ok, bad;
    ok.node = "gpu001";
    bad.node = "gpu002";
    bad.checks.push_back({"load", "load.value", "load", "GPU 0", modules::CheckStatus::kFail, 9, {}, ""});
    p(ok, 1, 2);
    p(bad, 2, 2);
    std::rewind(f);
    std::string text;
    char buf[256];
    while (size_t n = std::fread(buf, 1, sizeof buf, f)) text.append(buf, n);
    std::fclose(f);
    return text;
  };
  CHECK(drawn(true) == "\rhealth: 1/2 nodes\rhealth: 2/2 nodes\r\033[K");
  CHECK(drawn(false) == "health: gpu002 failed (2/2)\n");
}
