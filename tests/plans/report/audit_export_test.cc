// plumb audit export: per node, what was applied, when, from which commit, by whom, and the
// chain's head and verdict.
#include <doctest/doctest.h>

#include "fakes/temp_store.h"
#include "plans/store/store.h"

#include <sqlite3.h>

#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "plans/report/audit_export.h"

using namespace plumb;

namespace {

struct AuditDb : fakes::TempStore {
  AuditDb() : TempStore("plumb-audit") {}
};

void OneRun(plans::Journal& j, const std::string& id, const std::string& started) {
  plans::RunRecord r;
  r.id = id;
  r.cluster = "pod-a";
  r.plan_digest = "sha256:p";
  r.plan_json = R"({"nodes":[{"node":"gpu001","actions":[{"id":"nvidia_driver.install",
    "key":"nvidia.driver","before":"535.161.08","after":"550.90.07","disruption":"reboot"}]}]})";
  r.commit = std::string(40, 'c');
  r.plan_commit = std::string(40, 'p');
  r.started_at = started;
  r.who.operator_user = "runner";
  r.who.ci = "github";
  r.who.ci_actor = "bob";
  r.who.approver = "carol";
  r.who.author = "Dan <dan@example.com>";
  r.who.signer = "ssh dan@example.com (SHA256:d)";
  REQUIRE(j.BeginRun(r).ok());
  plans::StepRecord s;
  s.run = id;
  s.node = "gpu001";
  s.step = "apply:nvidia_driver.install";
  s.started_at = started;
  auto sid = j.StepIntent(s);
  REQUIRE(sid.ok());
  REQUIRE(j.StepOutcome(*sid, plans::StepState::kOk, "", started, 5, {}).ok());
  plans::NodeRecord n;
  n.run = id;
  n.node = "gpu001";
  n.status = plans::NodeState::kDone;
  n.started_at = started;
  n.ended_at = started;
  REQUIRE(j.PutNode(n).ok());
  REQUIRE(j.EndRun(id, plans::RunState::kDone, started, "1 done").ok());
}

}  // namespace

TEST_CASE("audit export: per node, what, when, which commit, by whom; the chain's head") {
  AuditDb db;
  auto j = std::move(plans::OpenStore(db.store).value());
  OneRun(*j, "20261001-000000-0001", "2026-10-01T00:00:00.000Z");
  OneRun(*j, "20261201-000000-0002", "2026-12-01T00:00:00.000Z");
  CHECK(plans::report::CheckSince("2026-11-30").ok());
  CHECK(plans::report::CheckSince("2026-11-30T22:00:00Z").ok());
  CHECK_FALSE(plans::report::CheckSince("last tuesday").ok());

  auto a = plans::report::CollectAudit(*j, "2026-11-30", db.store, "2027-01-01T00:00:00.000Z");
  REQUIRE(a.ok());
  CHECK(a->runs.size() == 1);   // the October run is before --since
  nlohmann::json out = plans::report::AuditToJson(*a);
  CHECK(out["format"] == "plumb.audit/v1");
  CHECK(out["chain"]["verified"] == true);
  CHECK(out["chain"]["head"] == j->VerifyChain()->head);
  REQUIRE(out["nodes"].size() == 1);
  const nlohmann::json& applied = out["nodes"][0]["applied"][0];
  CHECK(out["nodes"][0]["node"] == "gpu001");
  CHECK(applied["commit"] == std::string(40, 'c'));
  CHECK(applied["plan_commit"] == std::string(40, 'p'));
  CHECK(applied["who"]["approver"] == "carol");
  CHECK(applied["who"]["ci_actor"] == "bob");
  CHECK(applied["changes"][0] == nlohmann::json{{"key", "nvidia.driver"}, {"before", "535.161.08"},
                                               {"after", "550.90.07"}, {"disruption", "reboot"},
                                               {"outcome", "ok"}});
  const std::string html = plans::report::AuditToHtml(*a);
  CHECK(html.find("class=\"banner ok\"") != std::string::npos);
  CHECK(html.find("<h2 id=\"node-gpu001\">gpu001</h2>") != std::string::npos);
  CHECK(html.find("<b>approved by</b> carol") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);

  // A tampered journal is exported all the same, marked so, in red.
  db.Tamper("UPDATE runs SET commit_sha='eeee'");
  auto bad = plans::report::CollectAudit(*j, "2026-01-01", db.store, "2027-01-01T00:00:00.000Z");
  REQUIRE(bad.ok());
  CHECK(plans::report::AuditToJson(*bad)["chain"]["verified"] == false);
  CHECK(plans::report::AuditToHtml(*bad).find("class=\"banner bad\"") != std::string::npos);
}
