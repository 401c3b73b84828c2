// What `plumb runs` and `plumb history` print from the journal's records.
#include <doctest/doctest.h>

#include "plans/report/journal_views.h"

using namespace plumb;
using nlohmann::json;

namespace {

plans::RunRecord ViewRun() {
  plans::RunRecord r;
  r.id = "20261130-220000-4f2a";
  r.cluster = "pod-a";
  r.commit = "0123456789abcdef0123456789abcdef01234567";
  r.started_at = "2026-11-30T22:00:00.000Z";
  r.owner_host = "ci-1";
  r.owner_pid = 42;
  r.summary = "2 done";
  r.who.operator_user = "alice";
  r.who.approver = "carol";
  return r;
}

}  // namespace

TEST_CASE("journal views: the runs list, by whom and in what state, as text and JSON") {
  std::vector<plans::report::RunRow> rows = {{ViewRun(), "done"}};
  rows[0].run.who.ci = "github";
  rows[0].run.who.ci_actor = "bob";
  const std::string text = plans::report::RunsText(rows);
  CHECK(text ==
        "20261130-220000-4f2a   pod-a      0123456789ab 2026-11-30T22:00:00.000Z github:bob ok:carol  done: 2 done\n");
  CHECK(plans::report::RunsText({}) == "no runs in the journal\n");
  json j = json::parse(plans::report::RunsJson(rows));
  REQUIRE(j.size() == 1);
  CHECK(j[0]["state"] == "done");
  CHECK(j[0]["plan_commit"] == rows[0].run.commit);   // none recorded: the commit itself
  CHECK(j[0]["who"]["approver"] == "carol");
}

TEST_CASE("journal views: one run's nodes, with what a stopped run left unknown") {
  plans::report::RunDetail d;
  d.run = ViewRun();
  d.live = {false, "running? (no process holds its lock)"};
  plans::NodeRecord n1;
  n1.node = "n1";
  n1.status = plans::NodeState::kRunning;
  n1.last_step = "reboot";
  n1.note = "waiting for the node to boot";
  d.nodes = {n1};
  d.known = {"its process stopped during reboot"};
  d.unrecorded = {"n2"};
  const std::string text = plans::report::RunDetailText(d);
  CHECK(text.find("run 20261130-220000-4f2a  cluster pod-a  commit " + d.run.commit) == 0);
  CHECK(text.find("  2026-11-30T22:00:00.000Z .. (running)  running? (no process holds its lock)  (ci-1:42)\n") !=
        std::string::npos);
  CHECK(text.find("  operator alice\n  approved by carol\n") != std::string::npos);
  CHECK(text.find("  n1           running      reboot                 waiting for the node to boot; its process stopped during reboot\n") != std::string::npos);
  CHECK(text.find("  n2           -                                   no record: not started by this run") !=
        std::string::npos);
  d.live.live = true;
  CHECK(plans::report::RunDetailText(d).find("  n2           -                                   not reached yet\n") !=
        std::string::npos);
  json j = json::parse(plans::report::RunDetailJson(d));
  CHECK(j["owner"] == "ci-1:42");
  CHECK(j["nodes"][0]["known"] == "its process stopped during reboot");
  CHECK(j["nodes_without_record"] == json::array({"n2"}));
}

TEST_CASE("journal views: history shows each run's who once, above its steps") {
  plans::report::HistoryView h;
  CHECK(plans::report::HistoryText(h) == "no history\n");
  plans::RunRecord r = ViewRun();
  r.plan_commit = "fedcba9876543210fedcba9876543210fedcba98";
  h.runs[r.id] = r;
  for (const char* step : {"drain", "reboot"}) {
    plans::StepRecord s;
    s.run = r.id;
    s.node = "n1";
    s.step = step;
    s.commit = r.commit;
    s.started_at = "2026-11-30T22:00:01.000Z";
    s.duration_ms = 1500;
    s.outcome = std::string(step) == "drain" ? plans::StepState::kOk : plans::StepState::kNone;
    h.steps.push_back(s);
  }
  const std::string text = plans::report::HistoryText(h);
  CHECK(text.find("run 20261130-220000-4f2a  commit 0123456789ab (plan reviewed at fedcba987654)  by "
                  "alice, approved by carol\n") == 0);
  CHECK(text.find("run ", 1) == std::string::npos);   // once
  CHECK(text.find("  2026-11-30T22:00:01.000Z n1         0123456789ab reboot                       (no outcome)   1500ms \n") != std::string::npos);
  json j = json::parse(plans::report::HistoryJson(h));
  CHECK(j[1]["outcome"] == "no outcome (interrupted)");
  CHECK(j[0]["plan_commit"] == r.plan_commit);
}
