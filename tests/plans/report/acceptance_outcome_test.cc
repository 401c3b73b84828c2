// What `plumb acceptance` and `acceptance verify` say at the end (plans/report/
// acceptance_outcome.h): the verdict on a report file in the order shape, then digest; the
// summary with each failed node's reasons.
#include <doctest/doctest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "plans/report/acceptance_outcome.h"
#include "plans/report/drift.h"
#include "plans/report/report_fixture.h"

using namespace plumb;
using namespace plumb::plans::report;
using nlohmann::json;

namespace {

// The report fixture's four nodes, three checked healthy: gpu003 passes, the others do not
// (drift, drift, unreadable and unchecked).
struct OutcomeReport {
  testing::ReportWorld w;
  AcceptanceReport report;
  json doc;
  OutcomeReport() {
    const DriftReport drift = testing::WorldDriftReport(w);
    std::vector<plans::NodeHealth> health;
    for (const char* n : {"gpu001", "gpu002", "gpu003"}) {
      plans::NodeHealth h;
      h.node = n;
      h.modules = {"dcgm"};
      h.checks.push_back({"dcgm", "dcgm.all", "DCGM diagnostic", "", modules::CheckStatus::kPass,
                          "pass", "pass", ""});
      health.push_back(h);
    }
    AcceptanceMeta meta{"pod-a", "main", std::string(40, 'c'), "jane", "2026-11-29T12:00:00.000Z",
                        "2026-11-29T12:30:00.000Z", "0.1.0", 3};
    report = MakeAcceptanceReport(meta, drift, plans::ObservedState{}, health);
    doc = AcceptanceToJson(report);
  }
};

}  // namespace

TEST_CASE("acceptance_outcome: a report verifies with its digest, counts and commit said") {
  OutcomeReport r;
  const AcceptanceSaid s = VerifyAcceptanceReport("a.json", r.doc.dump());
  CHECK(s.outcome == Outcome::kOk);
  CHECK(s.err.empty());
  CHECK(s.out == "a.json: the digest matches the content (" + r.doc["digest"].get<std::string>() +
                     "; a checksum, not a signature); cluster pod-a, commit " + std::string(40, 'c') +
                     ", 1 of 4 node(s) passed\n");
}

TEST_CASE("acceptance_outcome: unreadable, not JSON, not a report, edited") {
  CHECK(VerifyAcceptanceReport("gone.json", std::nullopt).outcome == Outcome::kError);
  CHECK(VerifyAcceptanceReport("gone.json", std::nullopt).err == "error: cannot read gone.json\n");
  const AcceptanceSaid garbage = VerifyAcceptanceReport("g.json", "{not json");
  CHECK(garbage.outcome == Outcome::kRefused);
  CHECK(garbage.err == "error: g.json is not JSON\n");
  const AcceptanceSaid shape = VerifyAcceptanceReport("s.json", R"({"format": "x"})");
  CHECK(shape.outcome == Outcome::kRefused);   // refused, not "verified"
  CHECK(shape.err.find("s.json") != std::string::npos);
  OutcomeReport r;
  json edited = r.doc;
  edited["nodes"][0]["passed"] = !edited["nodes"][0]["passed"].get<bool>();
  const AcceptanceSaid changed = VerifyAcceptanceReport("e.json", edited.dump());
  CHECK(changed.outcome == Outcome::kNotVerified);
  CHECK_FALSE(changed.err.empty());
  CHECK(changed.out.empty());
}

TEST_CASE("acceptance_outcome: the summary rejects with each failed node's reasons") {
  OutcomeReport r;
  const AcceptanceSaid s = AcceptanceSummary(r.report, r.doc, "out");
  CHECK(s.outcome == Outcome::kUnhealthy);
  CHECK(s.out.rfind("acceptance REJECTED: 1 of 4 node(s) passed, 3 failed (commit cccccccccccc, "
                    "DCGM level 3)\n", 0) == 0);
  CHECK(s.out.find("\n  gpu001: drift: sysctl.vm.swappiness: 60, want 10\n") != std::string::npos);
  CHECK(s.out.find("report: out/acceptance.json (digest " + r.doc["digest"].get<std::string>() +
                   "), out/acceptance.html\n") != std::string::npos);
  AcceptanceReport all_pass = r.report;
  all_pass.nodes = {all_pass.nodes[2]};   // gpu003
  REQUIRE(all_pass.nodes[0].passed);
  const AcceptanceSaid ok = AcceptanceSummary(all_pass, r.doc, "out");
  CHECK(ok.outcome == Outcome::kOk);
  CHECK(ok.out.rfind("acceptance ACCEPTED: 1 of 1 node(s) passed, 0 failed", 0) == 0);
}

TEST_CASE("acceptance_outcome: the report written as JSON and HTML, then summed up; a write refused") {
  OutcomeReport r;
  std::map<std::string, std::string> files;
  const AcceptanceSaid s = WriteAcceptanceReport(
      r.report, "out", [&](const std::string& path, const std::string& text) -> Status {
        files[path] = text;
        return OkStatus();
      });
  CHECK(s.outcome == Outcome::kUnhealthy);
  CHECK(s.out == AcceptanceSummary(r.report, r.doc, "out").out);
  REQUIRE(files.size() == 2);
  CHECK(json::parse(files.at("out/acceptance.json")) == r.doc);
  CHECK(files.at("out/acceptance.html") == AcceptanceToHtml(r.doc));

  const AcceptanceSaid refused = WriteAcceptanceReport(
      r.report, "out", [](const std::string& path, const std::string&) -> Status {
        if (path == "out/acceptance.html") return Diagnostic::Error("output.write", "disk full");
        return OkStatus();
      });
  CHECK(refused.outcome == Outcome::kError);
  CHECK(refused.out.empty());
  CHECK(refused.err == Diagnostic::Error("output.write", "disk full").ToString() + "\n");
}
