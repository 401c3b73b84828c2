// What plan, drift and health say besides their reports: the verdict line a machine's log gets,
// the exit code, and the text report styled only in text.
#include <doctest/doctest.h>

#include "plans/report/command_outcomes.h"
#include "plans/report/report_fixture.h"
#include "schemas/exit_codes.h"

using namespace plumb;
using namespace plumb::plans::report;

TEST_CASE("drift outcome: the verdict counts the nodes, the exit code is drift's, style in text only") {
  testing::ReportWorld w;
  const DriftReport r = testing::WorldDriftReport(w);
  REQUIRE(r.drifted_nodes > 0);
  const TextStyle mark = [](std::string t) { return "<styled>" + t; };
  plans::CommandOutcome text = DriftCommandOutcome(r, "text", {}, mark);
  CHECK(text.verdict.rfind("plumb drift: drift: " + std::to_string(r.drifted_nodes) + " of " +
                               std::to_string(r.nodes.size()) + " node(s) drifted (",
                           0) == 0);
  CHECK(text.verdict.find("waived") != std::string::npos);
  CHECK(text.verdict.find("unreadable") != std::string::npos);
  CHECK(text.exit_code == ExitCodeFor("drift", Outcome::kDrift));
  CHECK(testing::RenderedOutcome(text).rfind("<styled>", 0) == 0);
  CHECK(testing::RenderedOutcome(DriftCommandOutcome(r, "json", {}, mark)).rfind("<styled>", 0) == std::string::npos);
}

TEST_CASE("health outcome: an empty report is healthy, its verdict says so") {
  HealthReport empty;
  plans::CommandOutcome o = HealthCommandOutcome(empty, "json", 0, nullptr);
  CHECK(o.verdict == "plumb health: 0 node(s): 0 passed, 0 warned, 0 failed, 0 unreachable");
  CHECK(o.exit_code == ExitCodeFor("health", Outcome::kOk));
  CHECK(testing::RenderedOutcome(o).rfind("{", 0) == 0);
}
