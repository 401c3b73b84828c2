// The journal, against each store backend (fakes/temp_store.h: SQLite, or PostgreSQL under
// tests/store/with_postgres.sh): migrations, durability across reopen, step intents/outcomes,
// history, the lock, the hash chain.
#include <doctest/doctest.h>

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "fakes/temp_store.h"
#include "plans/store/journal.h"
#include "plans/store/store.h"

using namespace plumb;

namespace {


plans::RunRecord Run(const std::string& id, const std::string& started) {
  plans::RunRecord r;
  r.id = id;
  r.cluster = "pod-a";
  r.plan_digest = "sha256:p";
  r.plan_json = R"({"format_version":1})";
  r.commit = std::string(40, 'a');
  r.started_at = started;
  r.owner_host = "ci-1";
  r.owner_pid = 42;
  return r;
}

}  // namespace

TEST_CASE("journal: creates its schema, and keeps steps across a reopen") {
  fakes::TempStore db;   // in a directory that does not exist yet
  {
    auto j = plans::OpenStore(db.store);
    REQUIRE(j.ok());
    REQUIRE((*j)->BeginRun(Run("r1", "2027-01-01T00:00:00.000Z")).ok());
    plans::StepRecord s;
    s.run = "r1";
    s.node = "gpu001";
    s.step = "reboot";
    s.detail = {{"boot_id", "b1"}};
    s.started_at = "2027-01-01T00:00:01.000Z";
    auto id = (*j)->StepIntent(s);
    REQUIRE(id.ok());
    s.step = "wait-boot";
    auto id2 = (*j)->StepIntent(s);
    REQUIRE(id2.ok());
    REQUIRE((*j)->StepOutcome(*id, plans::StepState::kOk, "", "2027-01-01T00:00:02.000Z", 1000,
                              {{"via", "ssh"}}).ok());
  }
  // A new process (a resume) sees the intent with no outcome, and the merged detail.
  auto j = plans::OpenStore(db.store);
  REQUIRE(j.ok());
  auto steps = (*j)->Steps("r1", "gpu001");
  REQUIRE(steps.ok());
  REQUIRE(steps->size() == 2);
  CHECK((*steps)[0].step == "reboot");
  CHECK((*steps)[0].outcome == plans::StepState::kOk);
  CHECK((*steps)[0].duration_ms == 1000);
  CHECK((*steps)[0].detail == nlohmann::json{{"boot_id", "b1"}, {"via", "ssh"}});
  CHECK((*steps)[1].outcome == plans::StepState::kNone);
  CHECK((*steps)[1].commit == std::string(40, 'a'));
  auto hist = (*j)->History("gpu001", 10);
  REQUIRE(hist.ok());
  CHECK(hist->size() == 2);
  CHECK((*j)->History("other", 10)->empty());
}

TEST_CASE("journal: is in WAL mode with a recorded schema version; refuses a newer schema") {
  fakes::TempStore db;
  REQUIRE(plans::OpenStore(db.store).ok());
  if (fakes::TestingPostgres()) {
    // No WAL pragma to check: PostgreSQL's commits are durable by default. The version is.
    db.Tamper("INSERT INTO schema_migrations VALUES (99, 'later')");
    auto j = plans::OpenStore(db.store);
    REQUIRE_FALSE(j.ok());
    CHECK(j.error().code == "journal.version");
    return;
  }
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(db.store.c_str(), &raw) == SQLITE_OK);
  auto scalar = [&](const char* sql) {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(raw, sql, -1, &st, nullptr);
    std::string v;
    if (sqlite3_step(st) == SQLITE_ROW) v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
  };
  CHECK(scalar("PRAGMA journal_mode") == "wal");
  CHECK(scalar("SELECT MAX(version) FROM schema_migrations") ==
        std::to_string(plans::kJournalSchemaVersion));
  sqlite3_exec(raw, "INSERT INTO schema_migrations VALUES (99, 'later')", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  auto j = plans::OpenStore(db.store);
  REQUIRE_FALSE(j.ok());
  CHECK(j.error().code == "journal.version");
}

TEST_CASE("journal: runs list newest first; nodes upsert; end run") {
  fakes::TempStore db;
  auto j = std::move(plans::OpenStore(db.store).value());
  REQUIRE(j->BeginRun(Run("r1", "2027-01-01T00:00:00.000Z")).ok());
  REQUIRE(j->BeginRun(Run("r2", "2027-01-02T00:00:00.000Z")).ok());
  CHECK_FALSE(j->BeginRun(Run("r2", "2027-01-02T00:00:00.000Z")).ok());   // ids are unique
  REQUIRE(j->EndRun("r1", plans::RunState::kDone, "2027-01-01T01:00:00.000Z", "8 done").ok());
  auto runs = j->ListRuns(10);
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 2);
  CHECK((*runs)[0].id == "r2");
  CHECK((*runs)[1].outcome == plans::RunState::kDone);
  CHECK((*runs)[1].summary == "8 done");
  plans::NodeRecord n;
  n.run = "r1";
  n.node = "gpu001";
  n.status = plans::NodeState::kRunning;
  n.admin_drained = true;
  n.admin_reason = "RMA";
  REQUIRE(j->PutNode(n).ok());
  n.status = plans::NodeState::kDone;
  REQUIRE(j->PutNode(n).ok());
  auto nodes = j->Nodes("r1");
  REQUIRE(nodes->size() == 1);
  CHECK((*nodes)[0].status == plans::NodeState::kDone);
  CHECK((*nodes)[0].admin_drained);
  CHECK(j->GetRun("nope")->has_value() == false);
}

TEST_CASE("journal: one lock per cluster, with owner and expiry; force-unlock") {
  fakes::TempStore db;
  auto j = std::move(plans::OpenStore(db.store).value());
  plans::LockInfo a{"pod-a", "r1", "ci-1", 42, "2027-01-01T00:00:00.000Z", "2027-01-01T00:10:00.000Z", ""};
  plans::LockInfo b{"pod-a", "r2", "laptop", 7, "2027-01-01T00:01:00.000Z", "2027-01-01T00:11:00.000Z", ""};
  plans::LockInfo held;
  CHECK(*j->AcquireLock(a, "2027-01-01T00:00:00.000Z", &held));
  CHECK_FALSE(*j->AcquireLock(b, "2027-01-01T00:01:00.000Z", &held));
  CHECK(held.run == "r1");
  CHECK(held.owner_host == "ci-1");
  CHECK(held.owner_pid == 42);
  // Another cluster is independent; the holder may re-take its own lock.
  plans::LockInfo c = b;
  c.cluster = "pod-b";
  CHECK(*j->AcquireLock(c, "2027-01-01T00:01:00.000Z", &held));
  CHECK(*j->AcquireLock(a, "2027-01-01T00:02:00.000Z", &held));
  // The same run from another process (a second --resume while the first runs) is refused.
  plans::LockInfo twin = a;
  twin.owner_pid = 43;
  CHECK_FALSE(*j->AcquireLock(twin, "2027-01-01T00:03:00.000Z", &held));
  CHECK(held.owner_pid == 42);
  twin = a;
  twin.owner_host = "ci-2";
  CHECK_FALSE(*j->AcquireLock(twin, "2027-01-01T00:03:00.000Z", &held));
  // Renewed, it still blocks; expired, it is taken over.
  REQUIRE(j->RenewLock(a, "2027-01-01T00:20:00.000Z").ok());
  CHECK_FALSE(*j->AcquireLock(b, "2027-01-01T00:15:00.000Z", &held));
  CHECK(*j->AcquireLock(b, "2027-01-01T00:21:00.000Z", &held));
  auto lost = j->RenewLock(a, "2027-01-01T00:30:00.000Z");   // lost it
  REQUIRE_FALSE(lost.ok());
  CHECK(lost.error().code == "journal.lock-lost");
  CHECK(j->ForceUnlock("r2").ok());
  CHECK_FALSE(j->ForceUnlock("r2").ok());
  CHECK_FALSE(j->GetLock("pod-a")->has_value());
}

TEST_CASE("journal: a run taken over elsewhere after expiry is the new process's; the old one is fenced out") {
  fakes::TempStore db;
  auto j = std::move(plans::OpenStore(db.store).value());
  // runner-b holds run r1 and goes silent (a VM paused, a store failover) past its expiry.
  plans::LockInfo old{"pod-a", "r1", "runner-b", 42, "2027-01-01T00:00:00.000Z", "2027-01-01T00:00:20.000Z", "boot/1"};
  plans::LockInfo held;
  REQUIRE(*j->AcquireLock(old, "2027-01-01T00:00:00.000Z", &held));
  // runner-a resumes the same run once the lock expired.
  plans::LockInfo taker{"pod-a", "r1", "runner-a", 7, "2027-01-01T00:00:30.000Z", "2027-01-01T00:00:50.000Z", "boot/9"};
  REQUIRE(*j->AcquireLock(taker, "2027-01-01T00:00:30.000Z", &held));
  // runner-b wakes up: its renewal fails (it stops starting nodes), its release frees nothing.
  auto renew = j->RenewLock(old, "2027-01-01T00:01:00.000Z");
  REQUIRE_FALSE(renew.ok());
  CHECK(renew.error().code == "journal.lock-lost");
  REQUIRE(j->ReleaseLock(old).ok());
  auto now = j->GetLock("pod-a");
  REQUIRE(now.ok());
  REQUIRE(now->has_value());
  CHECK((*now)->owner_host == "runner-a");
  CHECK((*now)->expires == "2027-01-01T00:00:50.000Z");
  // The same pid with another process start (a reused pid) is not the owner either.
  plans::LockInfo reused = taker;
  reused.owner_start = "boot/10";
  CHECK_FALSE(j->RenewLock(reused, "2027-01-01T00:02:00.000Z").ok());
  REQUIRE(j->RenewLock(taker, "2027-01-01T00:01:10.000Z").ok());
  REQUIRE(j->ReleaseLock(taker).ok());
  CHECK_FALSE(j->GetLock("pod-a")->has_value());
}

TEST_CASE("journal: default path follows PLUMB_JOURNAL, then XDG_STATE_HOME, then HOME") {
  setenv("PLUMB_JOURNAL", "/x/j.db", 1);
  CHECK(plans::DefaultJournalPath() == "/x/j.db");
  unsetenv("PLUMB_JOURNAL");
  setenv("XDG_STATE_HOME", "/state", 1);
  CHECK(plans::DefaultJournalPath() == "/state/plumb/journal.db");
  unsetenv("XDG_STATE_HOME");
  setenv("HOME", "/home/u", 1);
  CHECK(plans::DefaultJournalPath() == "/home/u/.local/state/plumb/journal.db");
}

// ---- the hash chain: tamper evidence ---------------------------------------------------

namespace {

std::string Problems(const plans::ChainReport& r) {
  std::string s;
  for (const auto& p : r.problems) s += p + "\n";
  return s;
}

// One run: two nodes, a few steps (one failed), node rows, a facts snapshot, the end.
void WriteRun(plans::Journal& j) {
  plans::RunRecord r = Run("r1", "2027-01-01T00:00:00.000Z");
  r.plan_commit = std::string(40, 'b');
  r.who.operator_user = "alice";
  r.who.approver = "carol";
  r.who.signer = "ssh carol (SHA256:c)";
  REQUIRE(j.BeginRun(r).ok());
  for (const char* node : {"gpu001", "gpu002"}) {
    for (const char* step : {"drain", "apply:kernel.install", "verify"}) {
      plans::StepRecord s;
      s.run = "r1";
      s.node = node;
      s.step = step;
      s.started_at = "2027-01-01T00:00:01.000Z";
      auto id = j.StepIntent(s);
      REQUIRE(id.ok());
      const bool fail = std::string(node) == "gpu002" && std::string(step) == "verify";
      REQUIRE(j.StepOutcome(*id, fail ? plans::StepState::kFailed : plans::StepState::kOk, fail ? "kernel still 5.15" : "",
                            "2027-01-01T00:00:02.000Z", 1000, {}).ok());
    }
    plans::NodeRecord n;
    n.run = "r1";
    n.node = node;
    n.status = plans::NodeState::kRunning;
    REQUIRE(j.PutNode(n).ok());
    n.note = "waiting for 1 job(s)";   // a heartbeat: not a new chain entry
    REQUIRE(j.PutNode(n).ok());
    n.status = std::string(node) == "gpu002" ? plans::NodeState::kFailed : plans::NodeState::kDone;
    REQUIRE(j.PutNode(n).ok());
    REQUIRE(j.SaveFacts("r1", node, "after", "sha256:f", {{"kernel", "6.1"}}, "2027-01-01T00:00:03.000Z").ok());
  }
  REQUIRE(j.EndRun("r1", plans::RunState::kFailed, "2027-01-01T01:00:00.000Z", "1 done, 1 failed").ok());
}

}  // namespace

TEST_CASE("journal chain: every write is chained; an untouched journal verifies") {
  fakes::TempStore db;
  auto j = std::move(plans::OpenStore(db.store).value());
  WriteRun(*j);
  auto r = j->VerifyChain();
  REQUIRE(r.ok());
  CHECK_MESSAGE(r->ok(), Problems(*r));
  // run: begin + end; 6 steps x (intent + outcome); nodes: 2 x (running, final); 2 facts.
  CHECK(r->entries == 2 + 12 + 4 + 2);
  CHECK(r->head.rfind("sha256:", 0) == 0);
  CHECK(j->VerifyChain(r->head)->ok());   // the head an export recorded is in the chain
  auto run = j->GetRun("r1");
  REQUIRE(run.ok());
  CHECK((*run)->plan_commit == std::string(40, 'b'));
  CHECK((*run)->who.approver == "carol");
  CHECK((*run)->who.signer == "ssh carol (SHA256:c)");
  CHECK(*j->KnowsNode("gpu002"));
  CHECK_FALSE(*j->KnowsNode("gpu003"));
}

TEST_CASE("journal chain: an edited, deleted or inserted row is named") {
  fakes::TempStore db;
  {
    auto j = std::move(plans::OpenStore(db.store).value());
    WriteRun(*j);
  }
  SUBCASE("UPDATE steps SET outcome='ok' (the failure that goes unnoticed without the chain)") {
    db.Tamper("UPDATE steps SET outcome='ok', error='' WHERE node='gpu002' AND step='verify'");
    auto r = plans::OpenStore(db.store).value()->VerifyChain();
    REQUIRE(r.ok());
    REQUIRE_FALSE(r->ok());
    CHECK(Problems(*r).find("steps row 6 (run r1, node gpu002, step verify) was edited after it "
                            "was written (chain entry") != std::string::npos);
    CHECK(Problems(*r).find("outcome \"failed\" in the chain, \"ok\" now") != std::string::npos);
  }
  SUBCASE("a deleted step") {
    db.Tamper("DELETE FROM steps WHERE node='gpu002' AND step='verify'");
    auto r = plans::OpenStore(db.store).value()->VerifyChain();
    CHECK(Problems(*r).find("steps row 6 (run r1, node gpu002, step verify) was deleted") !=
          std::string::npos);
  }
  SUBCASE("a row inserted behind plumb's back") {
    db.Tamper("INSERT INTO steps(run_id, node, step, started_at, outcome) VALUES "
                    "('r1', 'gpu002', 'verify', '2027-01-01T00:00:09.000Z', 'ok')");
    auto r = plans::OpenStore(db.store).value()->VerifyChain();
    CHECK(Problems(*r).find("steps row 7 (run r1, node gpu002, step verify) is not in the chain") !=
          std::string::npos);
  }
  SUBCASE("a run's outcome") {
    db.Tamper("UPDATE runs SET outcome='done'");
    auto r = plans::OpenStore(db.store).value()->VerifyChain();
    CHECK(Problems(*r).find("run r1 was edited") != std::string::npos);
  }
}

TEST_CASE("journal chain: an edited, deleted or reordered chain entry is named") {
  fakes::TempStore db;
  std::string head;
  {
    auto j = std::move(plans::OpenStore(db.store).value());
    WriteRun(*j);
    head = j->VerifyChain()->head;
  }
  SUBCASE("the entry edited together with its row, to hide the edit") {
    db.Tamper("UPDATE steps SET outcome='ok', error='' WHERE id=6;"
                    "UPDATE chain SET image=replace(replace(image, '\"outcome\":\"failed\"', "
                    "'\"outcome\":\"ok\"'), '\"error\":\"kernel still 5.15\"', '\"error\":\"\"') "
                    "WHERE tbl='steps' AND row_key='6'");
    auto r = plans::OpenStore(db.store).value()->VerifyChain();
    CHECK(Problems(*r).find("(steps row 6 (run r1, node gpu002, step verify)) was edited: its hash "
                            "does not match its content") != std::string::npos);
  }
  SUBCASE("an entry deleted") {
    db.Tamper("DELETE FROM chain WHERE seq=5");
    auto r = plans::OpenStore(db.store).value()->VerifyChain();
    CHECK(Problems(*r).find("chain entries 5..5 are missing: deleted") != std::string::npos);
  }
  SUBCASE("two entries swapped") {
    db.Tamper("UPDATE chain SET seq=-1 WHERE seq=3; UPDATE chain SET seq=3 WHERE seq=4; "
                    "UPDATE chain SET seq=4 WHERE seq=-1");
    auto r = plans::OpenStore(db.store).value()->VerifyChain();
    CHECK(Problems(*r).find("entries were reordered") != std::string::npos);
  }
  SUBCASE("the chain rewritten from scratch: only the recorded head tells") {
    // Dropping the last entries and their rows leaves a consistent, shorter chain.
    // Dropping the last entry and putting its row back as the entry before says leaves a
    // consistent, shorter chain: only a head recorded elsewhere exposes it.
    db.Tamper("DELETE FROM chain WHERE seq=(SELECT MAX(seq) FROM chain);"
                    "UPDATE runs SET outcome='running', ended_at='', summary=''");
    auto j = plans::OpenStore(db.store).value();
    CHECK_MESSAGE(j->VerifyChain()->ok(), Problems(*j->VerifyChain()));
    auto r = j->VerifyChain(head);
    REQUIRE(r->problems.size() == 1);
    CHECK(Problems(*r).find("the recorded head " + head + " is not in the chain") != std::string::npos);
  }
}

TEST_CASE("journal chain: a schema-2 journal is migrated; its rows are taken in as they were") {
  fakes::TempStore db;
  // Journals older than the chain exist only as SQLite files: PostgreSQL stores start at schema 3.
  if (fakes::TestingPostgres()) return;
  // A journal as plumb 0.1 (schema 2) left it, with a run and a step.
  db.Tamper(R"sql(
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);
CREATE TABLE runs (id TEXT PRIMARY KEY, cluster TEXT NOT NULL, plan_digest TEXT NOT NULL,
  plan_json TEXT NOT NULL, commit_sha TEXT NOT NULL, repo TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL, ended_at TEXT NOT NULL DEFAULT '', owner_host TEXT NOT NULL DEFAULT '',
  owner_pid INTEGER NOT NULL DEFAULT 0, outcome TEXT NOT NULL DEFAULT 'running',
  summary TEXT NOT NULL DEFAULT '');
CREATE TABLE steps (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL REFERENCES runs(id),
  node TEXT NOT NULL, step TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '{}', started_at TEXT NOT NULL,
  ended_at TEXT NOT NULL DEFAULT '', duration_ms INTEGER NOT NULL DEFAULT 0,
  outcome TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '');
CREATE TABLE nodes (run_id TEXT NOT NULL REFERENCES runs(id), node TEXT NOT NULL, status TEXT NOT NULL,
  last_step TEXT NOT NULL DEFAULT '', admin_drained INTEGER NOT NULL DEFAULT 0,
  admin_reason TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL DEFAULT '', ended_at TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (run_id, node));
CREATE TABLE facts (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, node TEXT NOT NULL,
  phase TEXT NOT NULL, digest TEXT NOT NULL, facts TEXT NOT NULL, taken_at TEXT NOT NULL);
CREATE TABLE locks (cluster TEXT PRIMARY KEY, run_id TEXT NOT NULL, owner_host TEXT NOT NULL,
  owner_pid INTEGER NOT NULL, since TEXT NOT NULL, expires TEXT NOT NULL,
  owner_start TEXT NOT NULL DEFAULT '');
INSERT INTO schema_migrations VALUES (1, 'then'), (2, 'then');
INSERT INTO runs(id, cluster, plan_digest, plan_json, commit_sha, started_at, outcome)
  VALUES ('old', 'pod-a', 'sha256:p', '{"format_version":1}', 'aaaa', '2026-06-01T00:00:00.000Z', 'done');
INSERT INTO steps(run_id, node, step, started_at, outcome) VALUES ('old', 'gpu001', 'verify',
  '2026-06-01T00:00:01.000Z', 'failed');
)sql");
  {
    auto j = plans::OpenStore(db.store);
    REQUIRE_MESSAGE(j.ok(), j.error().ToString());
    auto r = (*j)->VerifyChain();
    REQUIRE(r.ok());
    CHECK(r->ok());
    CHECK(r->adopted == 2);
    CHECK((*j)->GetRun("old")->value().who.operator_user.empty());   // not recorded then
  }
  // From now on an edit of the old rows is caught too.
  db.Tamper("UPDATE steps SET outcome='ok'");
  auto r = plans::OpenStore(db.store).value()->VerifyChain();
  CHECK(Problems(*r).find("steps row 1 (run old, node gpu001, step verify) was edited") !=
        std::string::npos);
}

TEST_CASE("journal: the store's clock, which the cluster lock is written in") {
  fakes::TempStore db;
  auto j = std::move(plans::OpenStore(db.store).value());
  auto t = j->StoreNow();
  REQUIRE(t.ok());
  // SQLite: this machine's clock; PostgreSQL: its server's (the same machine here). Either is
  // within an hour of ours: a wide margin, so a loaded machine never fails this.
  const auto skew = std::chrono::abs(*t - std::chrono::system_clock::now());
  CHECK(skew < std::chrono::hours(1));
}
