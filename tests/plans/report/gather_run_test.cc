// `plumb gather` over fakes (plans/report/gather_run): which repo errors stop it, the targets
// and shards, the nodes read through the shells it is given, the snapshot kept, exit codes.
#include <doctest/doctest.h>

#include <unistd.h>

#include <mutex>
#include <set>
#include <sstream>

#include "fakes/recording_shells.h"
#include "plans/observe/observed.h"
#include "plans/report/gather_run.h"
#include "schemas/exit_codes.h"

using namespace plumb;
using nlohmann::json;

namespace {

// A module whose probe says hello: its facts say whether the node did.
class HelloModule : public modules::Module {
 public:
  HelloModule() { info_.name = "hello"; }
  const modules::ModuleInfo& Info() const override { return info_; }
  std::string ProbeScript() const override { return "plumb_run said printf '%s' hello"; }
  // `out` is the section as framed parts (modules/probe_script.h): the word is in it.
  Result<modules::Facts> ParseProbe(std::string_view out, int) const override {
    return modules::Facts{{"said", out.find("hello") != std::string_view::npos ? "hello" : "?"}};
  }
  std::vector<modules::Action> Diff(const json&, const modules::Facts&) const override { return {}; }

 private:
  modules::ModuleInfo info_;
};


inventory::LoadedCluster ThreeNodes() {
  inventory::LoadedCluster lc;
  lc.cluster.name = "pod-a";
  lc.cluster.source = {"cluster", "main", std::string(40, 'c'), false};
  for (const char* name : {"gpu001", "gpu002", "gpu003"}) {
    inventory::Node n;
    n.name = name;
    lc.cluster.nodes.push_back(n);
  }
  return lc;
}

struct GatherWorld {
  HelloModule hello;
  std::set<std::string> opened;
  std::mutex mu;
  inventory::LoadedCluster loaded = ThreeNodes();
  plans::report::GatherSources src;
  std::ostringstream out, err;
  GatherWorld() {
    src.load = [this] { return loaded; };
    src.repo = "cluster";
    src.ref = "main";
    src.modules = {&hello};
    src.shells = [this](const inventory::Cluster&) -> std::unique_ptr<plans::ShellFactory> {
      auto f = std::make_unique<fakes::RecordingShells>();   // gpu002 refuses SSH
      f->opened = &opened;
      f->mu = &mu;
      f->refused = {"gpu002"};
      return f;
    };
    src.elapsed_s = [] { return 1.3; };
  }
  int Run(const plans::report::GatherRequest& req) {
    return plans::report::RunGather(req, src, out, err);
  }
};

}  // namespace

TEST_CASE("gather: only desired-state errors are warnings; the inventory's stop it") {
  Diagnostics diags;
  inventory::LoadedCluster lc = ThreeNodes();
  lc.diags.Add(Diagnostic::Error("schema.type", "bad pin", {"stacks/h100.yaml", 3, 1}));
  lc.diags.Add(Diagnostic::Error("coherence.driver", "driver and cuda disagree"));
  lc.diags.Add(Diagnostic::Error("inventory.no-stack", "gpu003 has no stack"));
  auto c = plans::report::ClusterToGather(lc, "cluster", "main", diags);
  REQUIRE(c.ok());
  CHECK(c->nodes.size() == 3);
  CHECK(diags.ErrorCount() == 0);
  CHECK(diags.WarningCount() == 3);

  lc.diags.Add(Diagnostic::Error("inventory.duplicate", "gpu001 twice", {"inventory.yaml", 9, 3}));
  Diagnostics more;
  auto bad = plans::report::ClusterToGather(lc, "cluster", "main", more);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == "gather.inventory");
  CHECK(bad.error().message.find("the cluster repo cluster at main has errors") == 0);
  CHECK(more.ErrorCount() == 1);

  Diagnostics none;
  CHECK_FALSE(plans::report::ClusterToGather(inventory::LoadedCluster{}, "r", "HEAD", none).ok());
}

TEST_CASE("gather: a bad --limit is an error, a bad --shard refused; shards keep the selection") {
  inventory::LoadedCluster lc = ThreeNodes();
  bool refused = true;
  auto nomatch = plans::report::SelectGatherTargets(lc.cluster, "cpu*", "", &refused);
  CHECK_FALSE(nomatch.ok());
  CHECK_FALSE(refused);
  auto badshard = plans::report::SelectGatherTargets(lc.cluster, "", "5/4", &refused);
  CHECK_FALSE(badshard.ok());
  CHECK(refused);

  auto all = plans::report::SelectGatherTargets(lc.cluster, "", "", &refused);
  REQUIRE(all.ok());
  CHECK(all->nodes.size() == 3);
  CHECK(all->shard.empty());
  size_t in_shards = 0;
  for (const char* s : {"1/2", "2/2"}) {
    auto part = plans::report::SelectGatherTargets(lc.cluster, "", s, &refused);
    REQUIRE(part.ok());
    CHECK(part->shard == s);
    CHECK(part->selection_nodes == 3);
    CHECK(part->selection_digest == all->selection_digest);
    in_shards += part->nodes.size();
  }
  CHECK(in_shards == 3);
}

TEST_CASE("gather: every selected node read; one refused is partial (3), and listed") {
  GatherWorld w;
  plans::report::GatherRequest req;
  char path[] = "/tmp/plumb-gather-run-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  req.facts_out = path;
  CHECK(w.Run(req) == ExitCodeFor("gather", Outcome::kPartial));
  CHECK(w.opened == std::set<std::string>{"gpu001", "gpu002", "gpu003"});
  const std::string text = w.out.str();
  CHECK(text.find("gpu001  ") == 0);
  CHECK(text.find("  hello           said=hello\n") != std::string::npos);
  CHECK(text.find("  gpu002  [refused] connection refused\n") != std::string::npos);
  CHECK(text.find("gathered 3 nodes in 1.3s: 2 read, 1 unreadable (1 refused)\n") != std::string::npos);
  CHECK(w.err.str().empty());
  // The snapshot kept is stamped with the commit and the selection.
  auto kept = plans::ReadObservedState(path);
  unlink(path);
  REQUIRE(kept.ok());
  CHECK(kept->commit == std::string(40, 'c'));
  CHECK(kept->nodes.size() == 3);
  CHECK(kept->selection_nodes == 3);
}

TEST_CASE("gather: json is the snapshot with its summary; every node read is 0") {
  GatherWorld w;
  plans::report::GatherRequest req;
  req.format = "json";
  req.limit = "gpu001,gpu003";
  req.shard = "1/1";
  CHECK(w.Run(req) == ExitCodeFor("gather", Outcome::kOk));
  CHECK(w.opened == std::set<std::string>{"gpu001", "gpu003"});
  CHECK(w.err.str() == "shard 1/1: 2 of 2 selected node(s)\n");
  json j = json::parse(w.out.str());
  CHECK(j["summary"]["read"] == 2);
  CHECK(j["summary"]["wall_s"] == 1.3);
  CHECK(j["selection"]["limit"] == "gpu001,gpu003");
  CHECK(j["shard"] == "1/1");
}

TEST_CASE("gather: refusals and errors before any node is read") {
  GatherWorld w;
  plans::report::GatherRequest req;
  SUBCASE("--fanout 0") {
    req.fanout = 0;
    CHECK(w.Run(req) == ExitCodeFor("gather", Outcome::kError));
    CHECK(w.err.str() == "error: --fanout must be at least 1\n");
  }
  SUBCASE("a bad shard") {
    req.shard = "0/3";
    CHECK(w.Run(req) == ExitCodeFor("gather", Outcome::kRefused));
  }
  SUBCASE("an invalid inventory") {
    w.loaded.diags.Add(Diagnostic::Error("inventory.duplicate", "gpu001 twice", {"inventory.yaml", 9, 3}));
    CHECK(w.Run(req) == ExitCodeFor("gather", Outcome::kError));
    CHECK(w.err.str().find("gather needs a valid inventory") != std::string::npos);
  }
  CHECK(w.opened.empty());
  CHECK(w.out.str().empty());
}
