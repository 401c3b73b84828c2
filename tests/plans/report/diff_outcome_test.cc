// What `plumb diff` prints and exits with (plans::report::DiffCommandOutcome).
#include <doctest/doctest.h>

#include "plans/report/command_outcomes.h"
#include "plans/report/report_fixture.h"
#include "schemas/exit_codes.h"

using namespace plumb;

namespace {

struct DiffLoads {
  inventory::LoadedCluster before, after;
  DiffLoads() {
    testing::ReportWorld w;
    before.cluster = w.cluster;
    before.desired = w.desired;
    after = before;
    before.cluster.source.commit = std::string(40, 'a');
    after.cluster.source.commit = std::string(40, 'b');
  }
};

}  // namespace

TEST_CASE("diff outcome: a change is 2 only with --detailed-exitcode; text styled, JSON with commits") {
  DiffLoads t;
  t.after.desired["gpu001"].desired.Mut()["nvidia"]["driver"] = "560.35.03";
  auto style = [](std::string text) { return "<" + text + ">"; };
  plans::CommandOutcome text = plans::report::DiffCommandOutcome(t.before, t.after, "text", false, style);
  CHECK(text.exit_code == ExitCodeFor("diff", Outcome::kInSync));
  const std::string shown = testing::RenderedOutcome(text);
  CHECK(shown.front() == '<');
  CHECK(shown.find("nvidia.driver: 550.90.07 -> 560.35.03") != std::string::npos);
  CHECK(text.verdict.empty());

  plans::CommandOutcome json = plans::report::DiffCommandOutcome(t.before, t.after, "json", true, style);
  CHECK(json.exit_code == ExitCodeFor("diff", Outcome::kChanges));
  nlohmann::json j = nlohmann::json::parse(testing::RenderedOutcome(json));
  CHECK(j["from_commit"] == std::string(40, 'a'));
  CHECK(j["to_commit"] == std::string(40, 'b'));

  plans::CommandOutcome md = plans::report::DiffCommandOutcome(t.before, t.after, "markdown", true, nullptr);
  CHECK(testing::RenderedOutcome(md).find("nvidia.driver") != std::string::npos);
  CHECK(testing::RenderedOutcome(md).front() != '<');
}

TEST_CASE("diff outcome: no change is in sync, even with --detailed-exitcode") {
  DiffLoads t;
  CHECK(plans::report::DiffCommandOutcome(t.before, t.after, "text", true, nullptr).exit_code ==
        ExitCodeFor("diff", Outcome::kInSync));
}
