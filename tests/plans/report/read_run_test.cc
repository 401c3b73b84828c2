// ReadAndPlan: the read-only run behind plan and drift (load -> select -> read -> plan), over
// fakes: a hand-built cluster, a snapshot file, shells that record what they are asked to open.
#include <doctest/doctest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "fakes/recording_shells.h"
#include "fakes/sysctl_like_module.h"
#include "plans/core/digest.h"
#include "plans/report/read_run.h"
#include "plans/report/report_fixture.h"

using namespace plumb;
using nlohmann::json;

namespace {

plans::NodeObservation SysctlObs(const std::string& name, int swappiness) {
  plans::NodeObservation o;
  o.node = name;
  o.reachable = true;
  o.facts.emplace("sysctl", Result<modules::Facts>(json{
                                {"values", {{"vm.swappiness", swappiness},
                                            {"net.core.rmem_max", 268435456}}}}));
  o.facts_digest = plans::FactsDigest(o.facts);
  return o;
}


struct ReadRunWorld {
  testing::ReportWorld w;
  fakes::SysctlLikeModule sysctl;
  plans::report::ReadRunSources s;
  std::vector<std::string> events;   // what the run did, in order
  std::set<std::string> opened;
  std::mutex mu;
  std::string snapshot;

  ReadRunWorld() {
    w.cluster.rollouts["roll"].name = "roll";
    s.load = [this] {
      events.push_back("load");
      inventory::LoadedCluster lc;
      lc.cluster = w.cluster;
      lc.desired = w.desired;
      return lc;
    };
    s.load_failure = [](const inventory::LoadedCluster&) {
      return Diagnostic::Error("repo.invalid", "the cluster repo cluster at main is invalid");
    };
    s.modules = {&sysctl};
    s.now = [] { return std::string("2026-11-29T12:00:00.000Z"); };
    s.check_commit = [this](const inventory::Cluster& c) {
      events.push_back("check " + c.source.commit.substr(0, 4));
      return OkStatus();
    };
    s.shells = [this](const inventory::Cluster&) -> std::unique_ptr<plans::ShellFactory> {
      events.push_back("shells");
      auto f = std::make_unique<fakes::RecordingShells>();   // every shell refuses
      f->opened = &opened;
      f->mu = &mu;
      f->refuse_all = true;
      return f;
    };
  }
  ~ReadRunWorld() {
    if (!snapshot.empty()) unlink(snapshot.c_str());
  }

  // A snapshot of gpu001 (swappiness 60: drifted) and gpu002 (10: in sync).
  void WriteSnapshot(const std::string& gathered_at) {
    char path[] = "/tmp/plumb-read-run-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    snapshot = path;
    plans::ObservedState st;
    st.gathered_at = gathered_at;
    st.nodes["gpu001"] = SysctlObs("gpu001", 60);
    st.nodes["gpu002"] = SysctlObs("gpu002", 10);
    REQUIRE(plans::WriteObservedState(st, snapshot).ok());
  }
  bool Warned(const plans::report::ReadRunResult& rr, const std::string& code) const {
    const auto& items = rr.run.diags.items();
    return std::any_of(items.begin(), items.end(), [&](const Diagnostic& d) { return d.code == code; });
  }
};

}  // namespace

TEST_CASE("read run: a recorded snapshot is planned, dated, and warned about when old") {
  ReadRunWorld t;
  t.WriteSnapshot("2026-10-29T12:00:00.000Z");
  t.s.shells = [](const inventory::Cluster&) -> std::unique_ptr<plans::ShellFactory> {
    FAIL("a run with --facts opened SSH shells");
    return nullptr;
  };
  int scheduler_asked = 0;
  t.s.scheduler = [&](const inventory::Cluster&, const plans::DesiredByNode& d) -> modules::Drainer* {
    ++scheduler_asked;
    CHECK(d.count("gpu001") == 1);
    return nullptr;
  };
  plans::report::ReadRunOptions o;
  o.facts = t.snapshot;
  o.limit = "gpu001,gpu002";
  plans::report::ReadRunResult rr;
  SUBCASE("older than --max-facts-age") {
    REQUIRE(plans::report::ReadAndPlan(o, t.s, rr).ok());
    CHECK(t.Warned(rr, "facts.old"));
  }
  SUBCASE("--max-facts-age 0s: never warned") {
    o.max_facts_age = "0s";
    REQUIRE(plans::report::ReadAndPlan(o, t.s, rr).ok());
    CHECK_FALSE(t.Warned(rr, "facts.old"));
  }
  CHECK(t.events == std::vector<std::string>{"load", "check cccc"});
  CHECK(scheduler_asked == 1);
  CHECK(rr.run.plan.gathered_at == "2026-10-29T12:00:00.000Z");
  CHECK(rr.run.plan.created_at == "2026-11-29T12:00:00.000Z");
  REQUIRE(rr.run.plan.nodes.size() == 1);
  CHECK(rr.run.plan.nodes[0].node == "gpu001");
  CHECK(rr.run.plan.nodes[0].actions.at(0).action.key == "sysctl.vm.swappiness");
  CHECK(rr.run.plan.in_sync == std::vector<std::string>{"gpu002"});
  CHECK(rr.ran_names == std::set<std::string>{"sysctl"});
  // kernel and nvidia are pinned and no module of this run reads them: said, not "in sync".
  CHECK(t.Warned(rr, "plan.unchecked"));
  const plans::report::DriftReport drift = plans::report::DriftReportOf(rr);
  CHECK(drift.drifted_nodes == 1);
}

TEST_CASE("read run: a snapshot that does not say when it was gathered is warned about") {
  ReadRunWorld t;
  t.WriteSnapshot("");
  plans::report::ReadRunOptions o;
  o.facts = t.snapshot;
  plans::report::ReadRunResult rr;
  REQUIRE(plans::report::ReadAndPlan(o, t.s, rr).ok());
  CHECK(t.Warned(rr, "facts.gathered-at"));
  CHECK_FALSE(t.Warned(rr, "facts.old"));
}

TEST_CASE("read run: --only-modules plans those modules' changes only, and warns of nothing unchecked") {
  ReadRunWorld t;
  t.WriteSnapshot("2026-11-29T11:59:00.000Z");
  plans::report::ReadRunOptions o;
  o.facts = t.snapshot;
  o.only_modules = {"bios"};
  plans::report::ReadRunResult rr;
  REQUIRE(plans::report::ReadAndPlan(o, t.s, rr).ok());
  CHECK(rr.run.plan.nodes.empty());
  CHECK(rr.run.plan.only_modules == std::vector<std::string>{"bios"});
  CHECK_FALSE(t.Warned(rr, "plan.unchecked"));
  CHECK_FALSE(t.Warned(rr, "facts.old"));
}

TEST_CASE("read run: a live read opens the selected nodes' shells, after the commit is judged") {
  ReadRunWorld t;
  plans::report::ReadRunOptions o;
  o.limit = "gpu001,gpu003";
  plans::report::ReadRunResult rr;
  SUBCASE("read: both unreadable, the plan incomplete") {
    REQUIRE(plans::report::ReadAndPlan(o, t.s, rr).ok());
    CHECK(t.events == std::vector<std::string>{"load", "check cccc", "shells"});
    CHECK(t.opened == std::set<std::string>{"gpu001", "gpu003"});
    CHECK(rr.run.plan.unreadable.size() == 2);
    CHECK_FALSE(rr.run.plan.complete);
    CHECK_FALSE(rr.observed.gathered_at.empty());
    CHECK(rr.run.plan.gathered_at == rr.observed.gathered_at);
  }
  SUBCASE("a refused commit: no node is read") {
    t.s.check_commit = [](const inventory::Cluster&) -> Status {
      return Diagnostic::Error("trust.unsigned", "commit is not signed");
    };
    Status st = plans::report::ReadAndPlan(o, t.s, rr);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == "trust.unsigned");
    CHECK(t.opened.empty());
    CHECK(t.events == std::vector<std::string>{"load"});
  }
  SUBCASE("--fanout 0: refused before any shell") {
    o.fanout = 0;
    Status st = plans::report::ReadAndPlan(o, t.s, rr);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == "plan.fanout");
    CHECK(t.opened.empty());
  }
}

TEST_CASE("read run: a bad --max-facts-age or an invalid repo leaves nothing to plan") {
  ReadRunWorld t;
  plans::report::ReadRunOptions o;
  plans::report::ReadRunResult rr;
  SUBCASE("--max-facts-age: refused before the repo is read") {
    o.max_facts_age = "soon";
    Status st = plans::report::ReadAndPlan(o, t.s, rr);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == "plan.max-facts-age");
    CHECK(t.events.empty());
  }
  SUBCASE("the repo's errors, all under the headline") {
    t.s.load = [] {
      inventory::LoadedCluster lc;
      lc.diags.Add(Diagnostic::Error("schema.type", "nodes must be a list",
                                     Location{"inventory.yaml", 3, 1}));
      return lc;
    };
    Status st = plans::report::ReadAndPlan(o, t.s, rr);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == "repo.invalid");
    CHECK(st.error().message.find("is invalid:\n") != std::string::npos);
    CHECK(st.error().message.find("nodes must be a list") != std::string::npos);
    CHECK(t.opened.empty());
  }
}

TEST_CASE("read run: drift's report carries the run's notes and the load's, not its expired waivers") {
  plans::report::ReadRunResult rr;
  rr.run.plan.created_at = "2026-11-29T12:00:00.000Z";
  rr.run.diags.Add(Diagnostic::Warning("facts.old", "the snapshot is 30 days old"));
  rr.loaded.diags.Add(Diagnostic::Warning("waivers.expired", "waiver w1 expired"));
  rr.loaded.diags.Add(Diagnostic::Warning("source.uncommitted", "uncommitted files read"));
  const plans::report::DriftReport plain = plans::report::DriftReportOf(rr);
  const plans::report::DriftReport noted = plans::report::DriftReportWithNotes(rr);
  CHECK(noted.diags.items().size() == plain.diags.items().size() + 2);
  const std::string text = noted.diags.ToText();
  CHECK(text.find("the snapshot is 30 days old") != std::string::npos);
  CHECK(text.find("uncommitted files read") != std::string::npos);
  CHECK(text.find("waiver w1 expired") == std::string::npos);
}

TEST_CASE("read run: the desired state at a marker commit, or why that load failed") {
  inventory::LoadedCluster at;
  at.desired["gpu001"].node = "gpu001";
  auto ok = plans::report::DesiredOfMarkerLoad(at);
  REQUIRE(ok.ok());
  CHECK(ok->count("gpu001") == 1);

  inventory::LoadedCluster bad;
  bad.diags.Add(Diagnostic::Warning("source.note", "a warning first"));
  bad.diags.Add(Diagnostic::Error("source.commit", "no commit abcd"));
  auto failed = plans::report::DesiredOfMarkerLoad(bad);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().code == "plan.marker-commit");
  CHECK(failed.error().message == "no commit abcd");
}
