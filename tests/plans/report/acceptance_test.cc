// The acceptance report: a node passes only when it was read, nothing drifted and every health
// check ran and passed; the JSON is what schemas/acceptance.schema.json says, its digest
// verifies and any edit breaks it; the HTML shows each failure in the grid and the bandwidth
// chart (the screenshot test is tests/integration/acceptance.sh).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "plans/report/acceptance.h"
#include "plans/report/drift.h"
#include "plans/report/report_fixture.h"
#include "schemas/validate.h"

using namespace plumb;
using namespace plumb::plans::report;
using modules::CheckResult;
using nlohmann::json;

namespace {

CheckResult Busbw(double v) {
  return {"nccl_bw", "nccl_bw.busbw", "NCCL all_reduce bus bandwidth", "",
          v >= 350 ? modules::CheckStatus::kPass : modules::CheckStatus::kFail, v, {{"min", 350}},
          v >= 350 ? "" : "below the pinned minimum"};
}

plans::NodeHealth Healthy(const std::string& node, double busbw) {
  plans::NodeHealth h;
  h.node = node;
  h.modules = {"dcgm", "nccl_bw"};
  h.checks.push_back({"dcgm", "dcgm.all", "DCGM diagnostic", "", modules::CheckStatus::kPass, "pass", "pass", ""});
  h.checks.push_back(Busbw(busbw));
  return h;
}

struct Built {
  testing::ReportWorld w;
  DriftReport drift;
  plans::ObservedState observed;
  AcceptanceReport report;
  json doc;
};

// gpu001 drifted (sysctl), gpu002 drifted (driver), gpu003 in sync and healthy, gpu004
// unreadable; gpu003's twin health result for gpu002 has a DCGM failure on GPU 3.
void Build(Built& b) {
  b.drift = testing::WorldDriftReport(b.w);
  plans::NodeObservation o;
  o.node = "gpu003";
  o.reachable = true;
  o.facts.emplace("firmware", json{{"components", {{{"id", "BMC"}, {"name", "BMC"}, {"version", "1.2.3"}}}},
                                   {"update_service", json::object()}});
  b.observed.nodes.emplace("gpu003", o);
  plans::NodeHealth bad = Healthy("gpu002", 402.5);
  bad.checks[0] = {"dcgm", "dcgm.memory.gpu3", "GPU Memory", "GPU 3", modules::CheckStatus::kFail, "fail", "pass",
                   "GPU 3 had uncorrectable memory errors and row remapping failed."};
  std::vector<plans::NodeHealth> health = {Healthy("gpu001", 480), bad, Healthy("gpu003", 478.2)};
  AcceptanceMeta meta{"pod-a", "main", std::string(40, 'c'), "jane", "2026-11-29T12:00:00.000Z",
                      "2026-11-29T12:30:00.000Z", "0.1.0", 3};
  b.report = MakeAcceptanceReport(meta, b.drift, b.observed, health);
  b.doc = AcceptanceToJson(b.report);
}

const AcceptanceNode& NodeOf(const AcceptanceReport& r, const std::string& name) {
  for (const AcceptanceNode& n : r.nodes)
    if (n.node == name) return n;
  FAIL("no node " << name);
  throw 0;
}

}  // namespace

TEST_CASE("acceptance: a node passes only when read, in sync, and every health check passed") {
  Built b;
  Build(b);
  REQUIRE(b.report.nodes.size() == 4);
  CHECK(b.report.Passed() == 1);
  CHECK(b.report.Failed() == 3);
  CHECK(NodeOf(b.report, "gpu003").passed);
  const AcceptanceNode& n1 = NodeOf(b.report, "gpu001");
  CHECK_FALSE(n1.passed);
  REQUIRE(n1.reasons.size() == 1);
  CHECK(n1.reasons[0] == "drift: sysctl.vm.swappiness: 60, want 10");
  const AcceptanceNode& n2 = NodeOf(b.report, "gpu002");
  REQUIRE(n2.reasons.size() == 3);   // its two drifted pins, then its failed check
  CHECK(n2.reasons[0] == "drift: nvidia.driver: 535.161.08, want 550.90.07");
  CHECK(n2.reasons[2].find("dcgm: GPU Memory (GPU 3): GPU 3 had uncorrectable memory errors") == 0);
  const AcceptanceNode& n4 = NodeOf(b.report, "gpu004");
  CHECK(n4.reasons.front().find("unreadable") == 0);
  CHECK(n4.reasons.back() == "health: not checked");
  // Every pin, with its live value: the desired one when in sync.
  bool seen = false;
  for (const json& p : NodeOf(b.report, "gpu003").pins)
    if (p["key"] == "nvidia.driver") {
      seen = true;
      CHECK(p["status"] == "in_sync");
      CHECK(p["live"] == "550.90.07");
    }
  CHECK(seen);
  CHECK(NodeOf(b.report, "gpu003").firmware == json::array({{{"name", "BMC"}, {"version", "1.2.3"}}}));
  CHECK(NodeOf(b.report, "gpu001").firmware.is_null());
}

TEST_CASE("acceptance: the JSON follows its schema, and its digest verifies until edited") {
  Built b;
  Build(b);
  Diagnostics d;
  CHECK_MESSAGE(schemas::ValidateJson(b.doc, "acceptance.schema.json", "acceptance.json", schemas::Marks{}, d),
                d.ToText());
  CHECK(b.doc["summary"]["failures"].size() == 3);
  CHECK(VerifyAcceptanceDigest(b.doc).ok());
  json edited = b.doc;
  edited["nodes"][1]["passed"] = true;   // someone "fixes" gpu002
  Status st = VerifyAcceptanceDigest(edited);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == "acceptance.digest");
  json no_digest = b.doc;
  no_digest.erase("digest");
  CHECK(VerifyAcceptanceDigest(no_digest).error().code == "acceptance.format");
  // The schema refuses a document of another shape.
  json wrong = b.doc;
  wrong["summary"]["passed"] = "all";
  Diagnostics d2;
  CHECK_FALSE(schemas::ValidateJson(wrong, "acceptance.schema.json", "acceptance.json", schemas::Marks{}, d2));
}

TEST_CASE("acceptance html: the grid shows each failure where it is, and the bandwidth chart") {
  Built b;
  Build(b);
  const std::string html = AcceptanceToHtml(b.doc);
  CHECK(html.find("<span class=\"verdict v-rejected\">rejected</span> 1 of 4 node(s) passed") != std::string::npos);
  CHECK(html.find("title=\"gpu002: dcgm fail\"") != std::string::npos);
  CHECK(html.find("title=\"gpu003: dcgm pass\"") != std::string::npos);
  CHECK(html.find("title=\"gpu001: pins fail\"") != std::string::npos);   // its drift
  CHECK(html.find("title=\"gpu004: dcgm fail\"") != std::string::npos);   // never checked: not a pass
  CHECK(html.find("title=\"gpu004: pins fail\"") != std::string::npos);   // unreadable: not a pass
  CHECK(html.find("aria-label=\"NCCL all_reduce bus bandwidth per node, GB/s\"") != std::string::npos);
  CHECK(html.find("min 350 GB/s") != std::string::npos);
  CHECK(html.find("478.2") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("GPU 3 had uncorrectable memory errors") != std::string::npos);
}

TEST_CASE("acceptance: a pin no module read is not verified, and the node does not pass") {
  Built b;
  Build(b);
  DriftInput in;
  in.plan = &b.w.plan;
  in.cluster = &b.w.cluster;
  in.desired = &b.w.desired;
  in.today = "2026-11-29";
  in.modules_run = {"kernel", "nvidia_driver"};   // sysctl's pins: read by nothing this run
  DriftReport drift = MakeDriftReport(in);
  std::vector<plans::NodeHealth> health = {Healthy("gpu003", 478.2)};
  AcceptanceReport r = MakeAcceptanceReport(b.report.meta, drift, b.observed, health);
  const AcceptanceNode& n3 = NodeOf(r, "gpu003");
  CHECK_FALSE(n3.passed);
  REQUIRE(!n3.reasons.empty());
  CHECK(n3.reasons[0].find("not verified: sysctl.") == 0);
  CHECK(AcceptanceToHtml(AcceptanceToJson(r)).find("title=\"gpu003: pins fail\"") != std::string::npos);
}

TEST_CASE("acceptance html: what tools and nodes said is escaped, never markup") {
  Built b;
  Build(b);
  plans::NodeHealth evil = Healthy("gpu003", 478.2);
  evil.checks[0] = {"dcgm", "dcgm.x", "GPU <b>Memory</b>", "GPU 3", modules::CheckStatus::kFail, "fail", "pass",
                    "<img src=x onerror=alert(1)> & \"quoted\""};
  AcceptanceReport r = MakeAcceptanceReport(b.report.meta, b.drift, b.observed, {evil});
  const std::string html = AcceptanceToHtml(AcceptanceToJson(r));
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("<b>Memory") == std::string::npos);
  CHECK(html.find("&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quoted&quot;") != std::string::npos);
}

TEST_CASE("acceptance: a kept health result reads back as it was written") {
  plans::NodeHealth h = Healthy("gpu001", 480);
  h.problems.Add(Diagnostic::Error("probe.dcgm", "cut short"));
  auto back = plans::NodeHealth::FromJson(h.ToJson());
  REQUIRE(back.has_value());
  CHECK(back->ToJson() == h.ToJson());
  json broken = h.ToJson();
  broken["checks"][0]["status"] = "maybe";
  CHECK_FALSE(plans::NodeHealth::FromJson(broken).has_value());
  CHECK_FALSE(plans::NodeHealth::FromJson(json::array()).has_value());
}

TEST_CASE("acceptance: a node whose GPU checks were held (jobs running) does not pass") {
  Built b;
  Build(b);
  plans::NodeHealth held = Healthy("gpu003", 478.2);
  held.checks[0] = {"dcgm", "dcgm.held", "dcgm", "", modules::CheckStatus::kSkip, nullptr, nullptr,
                    "not run: 1 job(s) running: 77 (alice: train) (--allow-busy runs it anyway)"};
  AcceptanceReport r = MakeAcceptanceReport(b.report.meta, b.drift, b.observed, {held});
  const AcceptanceNode& n3 = NodeOf(r, "gpu003");
  CHECK_FALSE(n3.passed);
  REQUIRE(n3.reasons.size() == 1);
  CHECK(n3.reasons[0] == "dcgm: not run: 1 job(s) running: 77 (alice: train) (--allow-busy runs it anyway)");
}
