// SqliteJournal: migrations, durability across reopen, step intents/outcomes, history, lock.
#include <doctest/doctest.h>

#include <sqlite3.h>

#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "plans/journal.h"

using namespace plumb;

namespace {

struct TempDb {
  std::string path;
  TempDb() {
    std::filesystem::path dir = std::filesystem::is_directory("/dev/shm")
                                    ? std::filesystem::path("/dev/shm")
                                    : std::filesystem::temp_directory_path();
    path = (dir / fmt::format("plumb-journal-{:x}/j.db", std::random_device{}())).string();
  }
  ~TempDb() { std::filesystem::remove_all(std::filesystem::path(path).parent_path()); }
};

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
  TempDb db;   // in a directory that does not exist yet
  {
    auto j = plans::OpenSqliteJournal(db.path);
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
    REQUIRE((*j)->StepOutcome(*id, "ok", "", "2027-01-01T00:00:02.000Z", 1000,
                              {{"via", "ssh"}}).ok());
  }
  // A new process (a resume) sees the intent with no outcome, and the merged detail.
  auto j = plans::OpenSqliteJournal(db.path);
  REQUIRE(j.ok());
  auto steps = (*j)->Steps("r1", "gpu001");
  REQUIRE(steps.ok());
  REQUIRE(steps->size() == 2);
  CHECK((*steps)[0].step == "reboot");
  CHECK((*steps)[0].outcome == "ok");
  CHECK((*steps)[0].duration_ms == 1000);
  CHECK((*steps)[0].detail == nlohmann::json{{"boot_id", "b1"}, {"via", "ssh"}});
  CHECK((*steps)[1].outcome == "");
  CHECK((*steps)[1].commit == std::string(40, 'a'));
  auto hist = (*j)->History("gpu001", 10);
  REQUIRE(hist.ok());
  CHECK(hist->size() == 2);
  CHECK((*j)->History("other", 10)->empty());
}

TEST_CASE("journal: is in WAL mode with a recorded schema version; refuses a newer schema") {
  TempDb db;
  REQUIRE(plans::OpenSqliteJournal(db.path).ok());
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(db.path.c_str(), &raw) == SQLITE_OK);
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
  auto j = plans::OpenSqliteJournal(db.path);
  REQUIRE_FALSE(j.ok());
  CHECK(j.error().code == "journal.version");
}

TEST_CASE("journal: runs list newest first; nodes upsert; end run") {
  TempDb db;
  auto j = std::move(plans::OpenSqliteJournal(db.path).value());
  REQUIRE(j->BeginRun(Run("r1", "2027-01-01T00:00:00.000Z")).ok());
  REQUIRE(j->BeginRun(Run("r2", "2027-01-02T00:00:00.000Z")).ok());
  CHECK_FALSE(j->BeginRun(Run("r2", "2027-01-02T00:00:00.000Z")).ok());   // ids are unique
  REQUIRE(j->EndRun("r1", "done", "2027-01-01T01:00:00.000Z", "8 done").ok());
  auto runs = j->ListRuns(10);
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 2);
  CHECK((*runs)[0].id == "r2");
  CHECK((*runs)[1].outcome == "done");
  CHECK((*runs)[1].summary == "8 done");
  plans::NodeRecord n;
  n.run = "r1";
  n.node = "gpu001";
  n.status = "running";
  n.admin_drained = true;
  n.admin_reason = "RMA";
  REQUIRE(j->PutNode(n).ok());
  n.status = "done";
  REQUIRE(j->PutNode(n).ok());
  auto nodes = j->Nodes("r1");
  REQUIRE(nodes->size() == 1);
  CHECK((*nodes)[0].status == "done");
  CHECK((*nodes)[0].admin_drained);
  CHECK(j->GetRun("nope")->has_value() == false);
}

TEST_CASE("journal: one lock per cluster, with owner and expiry; force-unlock") {
  TempDb db;
  auto j = std::move(plans::OpenSqliteJournal(db.path).value());
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
  REQUIRE(j->RenewLock("pod-a", "r1", "2027-01-01T00:20:00.000Z").ok());
  CHECK_FALSE(*j->AcquireLock(b, "2027-01-01T00:15:00.000Z", &held));
  CHECK(*j->AcquireLock(b, "2027-01-01T00:21:00.000Z", &held));
  CHECK_FALSE(j->RenewLock("pod-a", "r1", "2027-01-01T00:30:00.000Z").ok());   // lost it
  CHECK(j->ForceUnlock("r2").ok());
  CHECK_FALSE(j->ForceUnlock("r2").ok());
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
