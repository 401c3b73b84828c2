// The PostgreSQL store under faults (run by unit.store.postgresql, beside a server of its own:
// tests/store/with_postgres.sh; skipped in a plain unit-test run). A server that goes away is
// waited for one retry window per outage, not one per call; an error that waiting will not fix
// (a wrong password, a missing database, a bad option) is reported at once with libpq's reason.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "fakes/fake_clock.h"
#include "fakes/temp_store.h"
#include "plans/store/journal.h"
#include "plans/store/store.h"

using namespace plumb;

namespace {

using Steady = std::chrono::steady_clock;

std::string PgEnv(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// PLUMB_STORE_RETRY_S for the journals opened while it lives.
struct RetryWindow {
  explicit RetryWindow(int s) { setenv("PLUMB_STORE_RETRY_S", std::to_string(s).c_str(), 1); }
  ~RetryWindow() { unsetenv("PLUMB_STORE_RETRY_S"); }
};

int PgCtl(const std::string& args) {
  const std::string cmd = fmt::format("{} {} -D {} {} >/dev/null 2>&1", PgEnv("PLUMB_TEST_PG_AS"),
                                      PgEnv("PLUMB_TEST_PG_CTL"), PgEnv("PLUMB_TEST_PG_DATA"), args);
  return std::system(cmd.c_str());
}

// The test server stopped (as a crash would: immediate), and started again at the latest when
// this ends, whatever the test found: the other tests of the run use it.
struct ServerDown {
  bool down = false;
  ServerDown() {
    REQUIRE(PgCtl("-m immediate -w -t 60 stop") == 0);
    down = true;
  }
  void Start() {
    if (!down) return;
    REQUIRE(PgCtl(fmt::format("-w -t 120 -l {}/server.log -o \"{}\" start", PgEnv("PLUMB_TEST_PG_HOST"),
                              PgEnv("PLUMB_TEST_PG_OPTS"))) == 0);
    down = false;
  }
  ~ServerDown() {
    if (down) (void)PgCtl(fmt::format("-w -t 120 -l {}/server.log -o \"{}\" start", PgEnv("PLUMB_TEST_PG_HOST"),
                                      PgEnv("PLUMB_TEST_PG_OPTS")));
  }
};

struct SeenEvents {
  std::mutex mu;
  std::vector<plans::StoreEvent> all;
  void Add(const plans::StoreEvent& e) {
    std::lock_guard lock(mu);
    all.push_back(e);
  }
  std::vector<plans::StoreEvent::Kind> Kinds() {
    std::lock_guard lock(mu);
    std::vector<plans::StoreEvent::Kind> out;
    for (const auto& e : all) out.push_back(e.kind);
    return out;
  }
};

plans::NodeRecord OutageNode(const std::string& name) {
  plans::NodeRecord n;
  n.run = "r1";
  n.node = name;
  n.status = plans::NodeState::kNotStarted;
  return n;
}

double OutageSeconds(Steady::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

// No server needed: nothing listens on loopback port 1, so every connect is refused at once (the
// testbed's loopback has no firewall that would drop it instead).
TEST_CASE("postgres store: a store that never answers is retried for its window on the given clock, then named") {
  fakes::FakeClock clock;
  const auto t0 = clock.Now();
  RetryWindow window(60);
  auto j = plans::OpenPostgresJournal("postgresql://plumb@127.0.0.1:1/plumb", &clock);
  REQUIRE_FALSE(j.ok());
  CHECK(j.error().code == "journal.unreachable");
  CHECK(j.error().message.find("127.0.0.1:1") != std::string::npos);
  // The whole window passed on the clock given, in pauses of at most 2 s: with the real clock
  // this would have taken a minute.
  const auto waited = clock.Now() - t0;
  CHECK(waited >= std::chrono::seconds(60));
  CHECK(waited < std::chrono::seconds(63));
}

TEST_CASE("postgres store: an outage is waited out once; past its window every call fails at once") {
  if (!fakes::TestingPostgres()) return;
  fakes::TempStore db("plumb-outage");
  RetryWindow window(3);
  auto j = std::move(plans::OpenStore(db.store).value());
  SeenEvents seen;
  j->SetStoreObserver([&](const plans::StoreEvent& e) { seen.Add(e); });
  plans::RunRecord r;
  r.id = "r1";
  r.cluster = "c";
  r.plan_digest = "sha256:p";
  r.plan_json = "{}";
  r.commit = std::string(40, 'a');
  r.started_at = "2027-01-01T00:00:00.000Z";
  REQUIRE(j->BeginRun(r).ok());

  ServerDown server;
  // The first call finds the server gone, says so at once, and waits out the window (3 s).
  const auto t0 = Steady::now();
  Status first = j->PutNode(OutageNode("n1"));
  const auto t1 = Steady::now();
  REQUIRE_FALSE(first.ok());
  CHECK(first.error().code == "journal.unreachable");
  CHECK(first.error().message.find("the store has not answered since") != std::string::npos);
  CHECK(OutageSeconds(t1 - t0) < 60);   // the window and a wide margin
  REQUIRE(seen.Kinds().size() == 2);
  CHECK(seen.Kinds()[0] == plans::StoreEvent::Kind::kUnreachable);
  CHECK(seen.Kinds()[1] == plans::StoreEvent::Kind::kGaveUp);
  CHECK(seen.all[0].window == std::chrono::seconds(3));
  CHECK(seen.all[0].why.find("No such file or directory") != std::string::npos);

  // 200 more calls (a run's nodes not started, its lock, its end): each fails at once. Each
  // waited a window of its own before: 600 s.
  for (int i = 0; i < 200; ++i) {
    Status s = i % 2 ? j->PutNode(OutageNode(fmt::format("n{}", i))) : j->RenewLock({"c", "r1", "h", 1}, "2099");
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == "journal.unreachable");
  }
  CHECK(OutageSeconds(Steady::now() - t1) < 60);
  CHECK(seen.Kinds().size() == 2);   // said once per outage

  // Back: the store answers again (an attempt every few seconds), and says so.
  server.Start();
  const auto give_up = Steady::now() + std::chrono::seconds(120);
  Status again = j->PutNode(OutageNode("n1"));
  while (!again.ok() && Steady::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    again = j->PutNode(OutageNode("n1"));
  }
  REQUIRE_MESSAGE(again.ok(), again.error().ToString());
  REQUIRE(seen.Kinds().size() == 3);
  CHECK(seen.Kinds()[2] == plans::StoreEvent::Kind::kBack);
  auto chain = j->VerifyChain();
  REQUIRE(chain.ok());
  CHECK(chain->ok());
}

TEST_CASE("postgres store: a wrong password, a missing database or role, a bad option fail at once, with libpq's reason") {
  if (!fakes::TestingPostgres()) return;
  RetryWindow window(600);   // what a lost connection would wait: none of these may
  const std::string at = fmt::format("host={}&port={}", fakes::TestPgHost(), PgEnv("PLUMB_TEST_PG_PORT"));
  const std::string pw_user = PgEnv("PLUMB_TEST_PG_PW_USER");
  struct Case {
    std::string url;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {fmt::format("postgresql:///{}?{}&user={}&password=WrongPw1", pw_user, at, pw_user),
       "password authentication failed for user \"plumb_pw\""},
      {fmt::format("postgresql:///no_such_db_here?{}&user=plumb", at), "database \"no_such_db_here\" does not exist"},
      {fmt::format("postgresql:///plumb?{}&user=no_such_role", at), "role \"no_such_role\" does not exist"},
      {fmt::format("postgresql:///plumb?{}&user=plumb&sslmode=bogus", at), "invalid sslmode value: \"bogus\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.url);
    const auto t0 = Steady::now();
    auto j = plans::OpenStore(c.url);
    const double took = OutageSeconds(Steady::now() - t0);
    REQUIRE_FALSE(j.ok());
    CHECK(took < 60);   // at once; the window is 600 s
    CHECK(j.error().code == "journal.postgresql");
    CHECK(j.error().message.find(c.reason) != std::string::npos);
    CHECK(j.error().ToString().find("WrongPw1") == std::string::npos);
  }
  // The right password, from the URL (PLUMB_STORE) or libpq's password file: it opens.
  auto right = plans::OpenStore(fmt::format("postgresql:///{}?{}&user={}&password={}", pw_user, at, pw_user,
                                            PgEnv("PLUMB_TEST_PG_PW")));
  CHECK_MESSAGE(right.ok(), (right.ok() ? "" : right.error().ToString()));
}
