// history, runs and audit export over a real store (plans/report/journal_commands): what each
// prints where, and the exit codes of schemas/exit_codes.
#include <doctest/doctest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "fakes/temp_store.h"
#include "plans/report/journal_commands.h"
#include "plans/store/store.h"
#include "schemas/exit_codes.h"

using namespace plumb;

namespace {

struct CommandsDb : fakes::TempStore {
  CommandsDb() : TempStore("plumb-journal-commands") {}

  // One finished run that changed gpu001.
  void OneRun(const std::string& id) {
    auto opened = plans::OpenStore(store);
    REQUIRE(opened.ok());
    plans::Journal& j = **opened;
    plans::RunRecord r;
    r.id = id;
    r.cluster = "pod-a";
    r.commit = std::string(40, 'c');
    r.started_at = "2026-11-30T22:00:00.000Z";
    r.who.operator_user = "alice";
    REQUIRE(j.BeginRun(r).ok());
    plans::StepRecord s;
    s.run = id;
    s.node = "gpu001";
    s.step = "apply:sysctl.set";
    s.started_at = r.started_at;
    auto sid = j.StepIntent(s);
    REQUIRE(sid.ok());
    REQUIRE(j.StepOutcome(*sid, plans::StepState::kOk, "", r.started_at, 5, {}).ok());
    plans::NodeRecord n;
    n.run = id;
    n.node = "gpu001";
    n.status = plans::NodeState::kDone;
    n.started_at = r.started_at;
    n.ended_at = r.started_at;
    REQUIRE(j.PutNode(n).ok());
    REQUIRE(j.EndRun(id, plans::RunState::kDone, r.started_at, "1 done").ok());
  }
  std::string Shown() const { return plans::RedactStore(store); }
};

}  // namespace

TEST_CASE("runs: the list, one run's nodes, and an unknown run") {
  CommandsDb db;
  db.OneRun("20261130-220000-4f2a");
  std::ostringstream out, err;
  plans::report::RunsRequest r;
  r.store = db.store;
  CHECK(plans::report::RunRuns(r, out, err) == ExitCodeFor("runs", Outcome::kOk));
  CHECK(out.str().find("20261130-220000-4f2a   pod-a      cccccccccccc") == 0);
  CHECK(err.str().empty());

  std::ostringstream one, one_err;
  r.run = "20261130-220000-4f2a";
  r.format = "json";
  CHECK(plans::report::RunRuns(r, one, one_err) == ExitCodeFor("runs", Outcome::kOk));
  nlohmann::json j = nlohmann::json::parse(one.str());
  CHECK(j.dump().find("gpu001") != std::string::npos);

  std::ostringstream none, none_err;
  r.run = "nope";
  CHECK(plans::report::RunRuns(r, none, none_err) == ExitCodeFor("runs", Outcome::kError));
  CHECK(none.str().empty());
  CHECK(none_err.str() == "plumb runs: no run nope\n");
}

TEST_CASE("history: a node's steps; a node no run touched is an error with a hint") {
  CommandsDb db;
  db.OneRun("20261130-220000-4f2a");
  plans::report::HistoryRequest r;
  r.store = db.store;
  r.node = "gpu001";
  std::ostringstream out, err;
  CHECK(plans::report::RunHistory(r, out, err) == ExitCodeFor("history", Outcome::kOk));
  CHECK(out.str().find("apply:sysctl.set") != std::string::npos);
  CHECK(err.str().empty());

  r.node = "gpu0001";
  std::ostringstream out2, err2;
  CHECK(plans::report::RunHistory(r, out2, err2) == ExitCodeFor("history", Outcome::kError));
  CHECK(out2.str().empty());
  CHECK(err2.str() == "plumb history: error: no run in " + db.Shown() +
                          " touched a node named 'gpu0001'\nhint: plumb history (no node) lists "
                          "every node's steps; plumb runs lists the runs\n");
}

TEST_CASE("history --verify: the chain's head and verdict; an edited row is named") {
  CommandsDb db;
  db.OneRun("20261130-220000-4f2a");
  plans::report::HistoryRequest r;
  r.store = db.store;
  r.verify = true;
  std::ostringstream out, err;
  CHECK(plans::report::RunHistory(r, out, err) == ExitCodeFor("history", Outcome::kOk));
  CHECK(out.str().find("journal " + db.Shown() + ": ") == 0);
  CHECK(out.str().find("\nverified: every run, step, node and facts row matches its hash chain\n") !=
        std::string::npos);

  db.Tamper("UPDATE runs SET commit_sha='eeee'");
  std::ostringstream bad, bad_err;
  CHECK(plans::report::RunHistory(r, bad, bad_err) == ExitCodeFor("history", Outcome::kNotVerified));
  CHECK(bad.str().find("\nNOT VERIFIED: 1 problem(s):\n  ") != std::string::npos);
}

TEST_CASE("audit export: the export on out, its chain on err; a bad --since opens nothing") {
  CommandsDb db;
  db.OneRun("20261130-220000-4f2a");
  plans::report::AuditRequest r;
  r.store = db.store;
  r.since = "2026-11-01";
  r.now = "2026-12-01T00:00:00Z";
  std::ostringstream out, err;
  CHECK(plans::report::RunAuditExport(r, out, err) == ExitCodeFor("audit export", Outcome::kOk));
  nlohmann::json j = nlohmann::json::parse(out.str());
  CHECK(j["generated_at"] == "2026-12-01T00:00:00Z");
  CHECK(j["chain"]["verified"] == true);
  CHECK(err.str().find("plumb audit export: 1 run(s) since 2026-11-01; chain head sha256:") == 0);

  db.Tamper("UPDATE runs SET commit_sha='eeee'");
  std::ostringstream out2, err2;
  CHECK(plans::report::RunAuditExport(r, out2, err2) == ExitCodeFor("audit export", Outcome::kNotVerified));
  CHECK(err2.str().find("the journal does NOT verify (1 problem(s); the export says so):\n  ") !=
        std::string::npos);
  CHECK_FALSE(out2.str().empty());

  r.since = "last week";
  std::ostringstream out3, err3;
  CHECK(plans::report::RunAuditExport(r, out3, err3) == ExitCodeFor("audit export", Outcome::kError));
  CHECK(out3.str().empty());
  CHECK(err3.str().find("plumb audit export: ") == 0);
}
