// The cluster lock's keeper: renews while it can; a lock lost, or a store that does not answer,
// stops the run for good, and the operator is told exactly what happens to the nodes.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fakes/temp_store.h"
#include "plans/core/clock.h"
#include "plans/rollout/lock_keeper.h"

using namespace plumb;

namespace {

// A journal whose RenewLock can be made to fail with a chosen error; the rest is the real one.
class RenewFails final : public plans::Journal {
 public:
  explicit RenewFails(plans::Journal& j) : j_(j) {}
  std::mutex mu;
  std::string code;   ///< "" = renew for real
  std::atomic<int> renewals{0};

  Status BeginRun(const plans::RunRecord& r) override { return j_.BeginRun(r); }
  Status EndRun(const std::string& run, plans::RunState o, const std::string& at, const std::string& s) override {
    return j_.EndRun(run, o, at, s);
  }
  Status ReopenRun(const std::string& run, const std::string& h, int64_t pid) override {
    return j_.ReopenRun(run, h, pid);
  }
  Result<std::optional<plans::RunRecord>> GetRun(const std::string& run) override { return j_.GetRun(run); }
  Result<std::vector<plans::RunRecord>> ListRuns(int limit) override { return j_.ListRuns(limit); }
  Result<int64_t> StepIntent(const plans::StepRecord& s) override { return j_.StepIntent(s); }
  Status StepOutcome(int64_t id, plans::StepState o, const std::string& e, const std::string& at, int64_t ms,
                     const nlohmann::json& d) override {
    return j_.StepOutcome(id, o, e, at, ms, d);
  }
  Result<std::vector<plans::StepRecord>> Steps(const std::string& run, const std::string& node) override {
    return j_.Steps(run, node);
  }
  Result<std::vector<plans::StepRecord>> History(const std::string& node, int limit) override {
    return j_.History(node, limit);
  }
  Status PutNode(const plans::NodeRecord& n) override { return j_.PutNode(n); }
  Result<std::vector<plans::NodeRecord>> Nodes(const std::string& run) override { return j_.Nodes(run); }
  Status SaveFacts(const std::string& run, const std::string& node, const std::string& phase,
                   const std::string& digest, const nlohmann::json& facts, const std::string& at) override {
    return j_.SaveFacts(run, node, phase, digest, facts, at);
  }
  Result<bool> AcquireLock(const plans::LockInfo& w, const std::string& now, plans::LockInfo* h) override {
    return j_.AcquireLock(w, now, h);
  }
  Status RenewLock(const plans::LockInfo& m, const std::string& e) override {
    ++renewals;
    std::lock_guard lock(mu);
    if (!code.empty()) return Diagnostic::Error(code, "journal (postgresql://db/plumb): the store has not answered");
    return j_.RenewLock(m, e);
  }
  Status ReleaseLock(const plans::LockInfo& m) override { return j_.ReleaseLock(m); }
  Status ForceUnlock(const std::string& r) override { return j_.ForceUnlock(r); }
  Result<std::optional<plans::LockInfo>> GetLock(const std::string& c) override { return j_.GetLock(c); }
  Result<std::optional<plans::LockInfo>> LockOfRun(const std::string& r) override { return j_.LockOfRun(r); }

 private:
  plans::Journal& j_;
};

struct KeeperBed {
  fakes::TempStore store{"plumb-keeper"};
  std::unique_ptr<plans::Journal> real;
  std::unique_ptr<RenewFails> journal;
  plans::LockInfo mine;
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<std::string> said;

  KeeperBed() {
    auto j = plans::OpenStore(store.store);
    REQUIRE(j.ok());
    real = std::move(*j);
    journal = std::make_unique<RenewFails>(*real);
    const auto now = std::chrono::system_clock::now();
    mine = {"c1", "20270101-000000-abcd", "ctl", 4242, plans::Rfc3339(now),
            plans::Rfc3339(now + std::chrono::minutes(10)), "boot/1"};
    plans::LockInfo held;
    auto took = journal->AcquireLock(mine, plans::Rfc3339(now), &held);
    REQUIRE(took.ok());
    REQUIRE(*took);
  }
  plans::LockKeeper::Options Opts() {
    return {.every = std::chrono::milliseconds(10),
            .say = [this](const std::string& s) {
              std::lock_guard lock(mu);
              said.push_back(s);
            },
            .stop = &stop};
  }
  std::string Said() {
    std::lock_guard lock(mu);
    std::string all;
    for (const auto& s : said) all += s + "\n";
    return all;
  }
};

// Waits (up to a minute: a loaded machine) for `cond`.
template <typename F>
bool KeeperEventually(F cond) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace

TEST_CASE("lock keeper: renews while the store answers, releases at the end") {
  KeeperBed b;
  {
    plans::LockKeeper k(*b.journal, b.mine, std::chrono::minutes(10), std::chrono::steady_clock::now(), b.Opts());
    REQUIRE(KeeperEventually([&] { return b.journal->renewals >= 3; }));
    CHECK_FALSE(k.Expiring());
    CHECK_FALSE(b.stop);
    auto held = b.journal->GetLock("c1");
    REQUIRE(held.ok());
    REQUIRE(held->has_value());
    CHECK((*held)->expires > b.mine.expires);   // pushed ahead
  }
  auto after = b.journal->GetLock("c1");
  REQUIRE(after.ok());
  CHECK_FALSE(after->has_value());   // released
  CHECK(b.Said().empty());
}

TEST_CASE("lock keeper: a lost lock stops the run and says exactly what happens to the nodes") {
  // Issue 31: the message said the nodes in progress "finish"; they stop before their next step.
  KeeperBed b;
  plans::LockKeeper k(*b.journal, b.mine, std::chrono::minutes(10), std::chrono::steady_clock::now(), b.Opts());
  REQUIRE(b.journal->ForceUnlock(b.mine.run).ok());   // another process broke it
  REQUIRE(KeeperEventually([&] { return b.stop.load(); }));
  CHECK(k.Expiring());   // node leases are no longer renewed either
  const std::string said = b.Said();
  CHECK(said.find("lost the cluster lock") != std::string::npos);
  CHECK(said.find("no new node starts") != std::string::npos);
  CHECK(said.find("each node in progress stops before its next step") != std::string::npos);
  CHECK(said.find("a command already running on it completes first") != std::string::npos);
  CHECK(said.find("node leases are no longer renewed") != std::string::npos);
  CHECK(said.find("in progress finish") == std::string::npos);
}

TEST_CASE("lock keeper: a store that does not answer past its window stops the run at once, not at 4/5 of the ttl") {
  KeeperBed b;
  plans::LockKeeper k(*b.journal, b.mine, std::chrono::hours(24), std::chrono::steady_clock::now(), b.Opts());
  REQUIRE(KeeperEventually([&] { return b.journal->renewals >= 1; }));
  CHECK_FALSE(k.Expiring());
  {
    std::lock_guard lock(b.journal->mu);
    b.journal->code = "journal.unreachable";
  }
  // A day's ttl: without this rule it would go on for 19 hours.
  REQUIRE(KeeperEventually([&] { return k.Expiring(); }));
  const std::string said = b.Said();
  CHECK(said.find("cannot renew the cluster lock") != std::string::npos);
  CHECK(said.find("stopping") != std::string::npos);
  CHECK(said.find("each node in progress stops before its next step") != std::string::npos);
  // Given up for good: the store answering again does not undo it, and nothing more is tried.
  const int tried = b.journal->renewals;
  {
    std::lock_guard lock(b.journal->mu);
    b.journal->code.clear();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(k.Expiring());
  CHECK(b.journal->renewals == tried);
  CHECK_FALSE(b.stop);   // not a Ctrl-C: the run ends by the journal's failure or as stopped
}

TEST_CASE("lock keeper: another error is retried until most of the ttl is gone") {
  KeeperBed b;
  {
    std::lock_guard lock(b.journal->mu);
    b.journal->code = "journal.postgresql";
  }
  // Taken 9 minutes ago with a 10-minute ttl: past 4/5 already.
  plans::LockKeeper k(*b.journal, b.mine, std::chrono::minutes(10),
                      std::chrono::steady_clock::now() - std::chrono::minutes(9), b.Opts());
  CHECK(k.Expiring());
  REQUIRE(KeeperEventually([&] { return b.Said().find("stopping before another runner may take it") != std::string::npos; }));
}
