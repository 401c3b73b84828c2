// Node leases: the real lease script, run by /bin/sh with flock(1) on this machine in a temp
// directory (as it runs on a node), and the reply parser.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "modules/transport/local_shell.h"
#include "plans/rollout/node_lease.h"

using namespace plumb;

namespace {

struct Dir {
  std::string path;
  Dir() {
    path = (std::filesystem::temp_directory_path() /
            fmt::format("plumb-lease-{:x}", std::random_device{}()))
               .string();
  }
  ~Dir() { std::filesystem::remove_all(path); }
};

plans::LeaseHolder Holder(const std::string& run) { return {run, "ctl-1", 4242, "alice", 0}; }

Result<plans::LeaseReply> Do(const std::string& op, const Dir& d, const std::string& run, int ttl) {
  transport::LocalShell sh;
  auto out = sh.Run(plans::LeaseScript(op, d.path, Holder(run), std::chrono::seconds(ttl)),
                    std::chrono::seconds(60));
  REQUIRE(out.ok());
  INFO(out->err);
  REQUIRE(out->exit_status == 0);
  return plans::ParseLeaseReply(out->out);
}

bool HasFlock() { return std::system("command -v flock >/dev/null 2>&1") == 0; }

}  // namespace

TEST_CASE("lease script: take, refuse another run, renew, release") {
  if (!HasFlock()) {
    MESSAGE("skipped: flock(1) (util-linux) is not installed on this machine");
    return;
  }
  Dir d;
  auto a = Do("acquire", d, "run-a", 600);
  REQUIRE(a.ok());
  CHECK(a->kind == plans::LeaseReply::Kind::kTaken);
  std::ifstream f(d.path + "/lease");
  std::string all((std::istreambuf_iterator<char>(f)), {});
  CHECK(all.find("run=run-a\n") != std::string::npos);
  CHECK(all.find("host=ctl-1\n") != std::string::npos);
  CHECK(all.find("user=alice\n") != std::string::npos);
  // Another run is refused and told who holds it.
  auto b = Do("acquire", d, "run-b", 600);
  REQUIRE(b.ok());
  CHECK(b->kind == plans::LeaseReply::Kind::kHeld);
  CHECK(b->other.run == "run-a");
  CHECK(b->other.pid == 4242);
  CHECK(b->other.expires > 0);
  // The holder renews and re-takes its own; the other cannot renew or release it.
  CHECK(Do("renew", d, "run-a", 600)->kind == plans::LeaseReply::Kind::kTaken);
  CHECK(Do("acquire", d, "run-a", 600)->kind == plans::LeaseReply::Kind::kTaken);
  CHECK(Do("renew", d, "run-b", 600)->kind == plans::LeaseReply::Kind::kLost);
  CHECK(Do("release", d, "run-b", 0)->kind == plans::LeaseReply::Kind::kReleased);
  CHECK(std::filesystem::exists(d.path + "/lease"));
  CHECK(Do("release", d, "run-a", 0)->kind == plans::LeaseReply::Kind::kReleased);
  CHECK_FALSE(std::filesystem::exists(d.path + "/lease"));
}

TEST_CASE("lease script: the same run resumed by another process takes the node; the old process is fenced out") {
  if (!HasFlock()) {
    MESSAGE("skipped: flock(1) (util-linux) is not installed on this machine");
    return;
  }
  Dir d;
  transport::LocalShell sh;
  auto run = [&](const std::string& op, const plans::LeaseHolder& h) {
    auto out = sh.Run(plans::LeaseScript(op, d.path, h, std::chrono::seconds(600)), std::chrono::seconds(60));
    REQUIRE(out.ok());
    REQUIRE(out->exit_status == 0);
    return plans::ParseLeaseReply(out->out).value();
  };
  const plans::LeaseHolder old{"run-a", "runner-b", 42, "ci", 0};
  const plans::LeaseHolder taker{"run-a", "runner-a", 7, "ci", 0};
  CHECK(run("acquire", old).kind == plans::LeaseReply::Kind::kTaken);
  // --resume of the same run (after a crash, or elsewhere once the cluster lock expired).
  CHECK(run("acquire", taker).kind == plans::LeaseReply::Kind::kTaken);
  // The old process, were it alive, can neither renew nor release the taker's lease.
  auto lost = run("renew", old);
  CHECK(lost.kind == plans::LeaseReply::Kind::kLost);
  CHECK(lost.other.pid == 7);
  CHECK(run("release", old).kind == plans::LeaseReply::Kind::kReleased);
  CHECK(std::filesystem::exists(d.path + "/lease"));
  CHECK(run("renew", taker).kind == plans::LeaseReply::Kind::kTaken);
  CHECK(run("release", taker).kind == plans::LeaseReply::Kind::kReleased);
  CHECK_FALSE(std::filesystem::exists(d.path + "/lease"));
}

TEST_CASE("lease script: an expired lease is taken over, naming whose it was") {
  if (!HasFlock()) {
    MESSAGE("skipped: flock(1) (util-linux) is not installed on this machine");
    return;
  }
  Dir d;
  REQUIRE(Do("acquire", d, "run-old", -10).ok());   // expired ten seconds ago
  auto r = Do("acquire", d, "run-new", 600);
  REQUIRE(r.ok());
  CHECK(r->kind == plans::LeaseReply::Kind::kTookOver);
  CHECK(r->other.run == "run-old");
  CHECK(Do("acquire", d, "run-old", 600)->kind == plans::LeaseReply::Kind::kHeld);
}

TEST_CASE("lease script: many runs at once, exactly one gets the lease") {
  if (!HasFlock()) {
    MESSAGE("skipped: flock(1) (util-linux) is not installed on this machine");
    return;
  }
  Dir d;
  std::vector<std::thread> ts;
  std::atomic<int> taken{0}, held{0};
  for (int i = 0; i < 8; ++i)
    ts.emplace_back([&, i] {
      transport::LocalShell sh;
      auto out = sh.Run(plans::LeaseScript("acquire", d.path, Holder(fmt::format("run-{}", i)),
                                           std::chrono::seconds(600)),
                        std::chrono::seconds(120));
      if (!out || out->exit_status != 0) return;
      auto r = plans::ParseLeaseReply(out->out);
      if (r && r->kind == plans::LeaseReply::Kind::kTaken) ++taken;
      if (r && r->kind == plans::LeaseReply::Kind::kHeld) ++held;
    });
  for (auto& t : ts) t.join();
  CHECK(taken == 1);
  CHECK(held == 7);
}

TEST_CASE("lease script: values are quoted; the reply parser rejects what is not its answer") {
  plans::LeaseHolder evil{"r'; rm -rf /tmp/x; '", "h$(id)", 1, "u`id`", 0};
  const std::string s = plans::LeaseScript("acquire", "/var/lib/plumb", evil, std::chrono::seconds(5));
  CHECK(s.find("run='r'\\''; rm -rf /tmp/x; '\\'''") != std::string::npos);
  CHECK(s.find("'h$(id)'") != std::string::npos);
  CHECK_FALSE(plans::ParseLeaseReply("permission denied\n").ok());
  auto held = plans::ParseLeaseReply("held\nrun=r1\nhost=h\npid=7\nuser=u\nsince=1\nexpires=99\n");
  REQUIRE(held.ok());
  CHECK(held->kind == plans::LeaseReply::Kind::kHeld);
  CHECK(held->other.expires == 99);
}
