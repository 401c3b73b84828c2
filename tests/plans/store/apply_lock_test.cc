// The cluster lock: --force-unlock never releases a live owner's lock; another host's lock
// needs expiry or the owner named exactly; a run's own dead process is taken over on resume.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "fakes/temp_journal.h"
#include "plans/core/process_identity.h"
#include "plans/store/apply_lock.h"

using namespace plumb;

namespace {

struct LockDb : fakes::TempJournal {
  LockDb() : TempJournal("plumb-lock") {}
};

plans::LockInfo Lock(const std::string& run, const std::string& host, int64_t pid,
                     const std::string& start, const std::string& expires) {
  return {"pod", run, host, pid, "2027-01-01T00:00:00.000Z", expires, start};
}

// A pid that is not running: a child that has exited and been reaped.
int64_t DeadPid() {
  pid_t p = fork();
  if (p == 0) _exit(0);
  int st;
  waitpid(p, &st, 0);
  return p;
}

}  // namespace

TEST_CASE("process identity: this process is alive with its own start time, not with another") {
  const std::string start = plans::ProcessStart(getpid());
  REQUIRE_FALSE(start.empty());
  CHECK(start == plans::ProcessStart(getpid()));
  CHECK(plans::OwnerAlive(getpid(), start));
  CHECK_FALSE(plans::OwnerAlive(getpid(), start + "0"));   // the pid, reused by someone else
  CHECK_FALSE(plans::OwnerAlive(DeadPid(), ""));
}

TEST_CASE("force-unlock: a live owner on this host is refused, whatever the user says") {
  LockDb db;
  const std::string host = plans::HostName();
  auto want = Lock("r1", host, getpid(), plans::ProcessStart(getpid()), "2999-01-01T00:00:00.000Z");
  REQUIRE(plans::TakeClusterLock(*db.j, want, "2027-01-01T00:00:00.000Z", nullptr).ok());
  auto r = plans::ForceUnlockChecked(*db.j, "r1", fmt::format("{}:{}", host, getpid()),
                                     "2027-01-01T00:00:01.000Z", host);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "apply.unlock-live");
  auto still = db.j->LockOfRun("r1");
  REQUIRE(still.ok());
  CHECK(still->has_value());
}

TEST_CASE("force-unlock: a dead owner on this host is released") {
  LockDb db;
  const std::string host = plans::HostName();
  REQUIRE(plans::TakeClusterLock(*db.j, Lock("r1", host, DeadPid(), "", "2999-01-01T00:00:00.000Z"),
                                 "2027-01-01T00:00:00.000Z", nullptr).ok());
  auto r = plans::ForceUnlockChecked(*db.j, "r1", "", "2027-01-01T00:00:01.000Z", host);
  REQUIRE(r.ok());
  CHECK(r->run == "r1");
  CHECK_FALSE(db.j->LockOfRun("r1")->has_value());
}

TEST_CASE("force-unlock: another host's lock needs expiry or its owner named exactly") {
  LockDb db;
  REQUIRE(plans::TakeClusterLock(*db.j, Lock("r1", "ci-7", 99, "", "2027-01-01T00:10:00.000Z"),
                                 "2027-01-01T00:00:00.000Z", nullptr).ok());
  auto plain = plans::ForceUnlockChecked(*db.j, "r1", "", "2027-01-01T00:01:00.000Z", "here");
  REQUIRE_FALSE(plain.ok());
  CHECK(plain.error().code == "apply.unlock-remote");
  CHECK(plain.error().hint.find("--dead-owner ci-7:99") != std::string::npos);
  auto wrong = plans::ForceUnlockChecked(*db.j, "r1", "ci-7:98", "2027-01-01T00:01:00.000Z", "here");
  REQUIRE_FALSE(wrong.ok());
  auto named = plans::ForceUnlockChecked(*db.j, "r1", "ci-7:99", "2027-01-01T00:01:00.000Z", "here");
  CHECK(named.ok());
  // Expired: no confirmation needed.
  REQUIRE(plans::TakeClusterLock(*db.j, Lock("r2", "ci-8", 5, "", "2027-01-01T00:10:00.000Z"),
                                 "2027-01-01T00:00:00.000Z", nullptr).ok());
  CHECK(plans::ForceUnlockChecked(*db.j, "r2", "", "2027-01-01T00:20:00.000Z", "here").ok());
}

TEST_CASE("cluster lock: a second process of the same run is refused; its dead one is taken over") {
  LockDb db;
  const std::string host = plans::HostName();
  const std::string start = plans::ProcessStart(getpid());
  REQUIRE(plans::TakeClusterLock(*db.j, Lock("r1", host, getpid(), start, "2999-01-01T00:00:00.000Z"),
                                 "2027-01-01T00:00:00.000Z", nullptr).ok());
  // Same run, another live process (a second --resume): refused.
  Status second = plans::TakeClusterLock(
      *db.j, Lock("r1", host, getppid(), plans::ProcessStart(getppid()), "2999-01-01T00:00:00.000Z"),
      "2027-01-01T00:00:00.000Z", nullptr);
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code == "apply.locked");
  // The holder's process gone: --resume takes over, saying so.
  LockDb db2;
  REQUIRE(plans::TakeClusterLock(*db2.j, Lock("r1", host, DeadPid(), "", "2999-01-01T00:00:00.000Z"),
                                 "2027-01-01T00:00:00.000Z", nullptr).ok());
  std::vector<std::string> notes;
  CHECK(plans::TakeClusterLock(*db2.j, Lock("r1", host, getpid(), start, "2999-01-01T00:00:00.000Z"),
                               "2027-01-01T00:00:00.000Z", &notes).ok());
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("is gone; taking over") != std::string::npos);
}
