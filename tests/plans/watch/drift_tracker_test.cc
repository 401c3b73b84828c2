// DriftTracker: verdicts in, events out. Each rule of drift_tracker.h, one case at a time.
#include <doctest/doctest.h>

#include "plans/watch/drift_tracker.h"

using namespace plumb;
using plans::report::DriftCheck;
using plans::report::DriftNode;
using plans::watch::DriftTracker;
using plans::watch::EventKind;

namespace {

DriftCheck Check(const std::string& key, plumb::plans::report::DriftStatus st, nlohmann::json live = nullptr,
                 nlohmann::json desired = 60) {
  auto subject = std::make_shared<plans::report::CheckSubject>();
  subject->key = key;
  subject->pointer = "/" + key;
  subject->module = "sysctl";
  subject->desired = std::move(desired);
  subject->origin = {"stacks/base.yaml", 2, 20};
  DriftCheck c;
  c.subject = subject;
  c.status = st;
  c.observed = std::move(live);
  return c;
}

DriftNode DriftNodeOf(std::vector<DriftCheck> checks) {
  DriftNode n;
  n.node = "n1";
  n.checks = std::move(checks);
  return n;
}

DriftNode Unreadable(const std::string& why) {
  DriftNode n;
  n.node = "n1";
  n.readable = false;
  n.unreadable_reason = why;
  return n;
}

std::vector<std::string> Lines(const std::vector<plans::watch::WatchEvent>& es) {
  std::vector<std::string> out;
  for (const auto& e : es) {
    std::string l = plans::watch::EventKindName(e.kind);
    if (!e.key.empty()) l += " " + e.key;
    if (!e.reason.empty()) l += " " + e.reason;
    out.push_back(l);
  }
  return out;
}

const DriftTracker::Context kCx{"2027-01-01T00:00:00.000Z", "t", std::string(40, 'c')};

}  // namespace

TEST_CASE("tracker: a node's first verdict reports the drift it already has") {
  DriftTracker t;
  auto es = t.Update(DriftNodeOf({Check("a", plumb::plans::report::DriftStatus::kDrift, "7"), Check("b", plumb::plans::report::DriftStatus::kInSync),
                           Check("c", plumb::plans::report::DriftStatus::kWaived, "1")}),
                     kCx);
  REQUIRE(Lines(es) == std::vector<std::string>{"drift a intent"});
  CHECK(es[0].live == "7");
  CHECK(es[0].desired == 60);
  CHECK(es[0].node == "n1");
  CHECK(es[0].commit == kCx.commit);
  CHECK(es[0].origin == "stacks/base.yaml:2:20");
}

TEST_CASE("tracker: drift appears, changes value, clears; an unchanged verdict says nothing") {
  DriftTracker t;
  CHECK(t.Update(DriftNodeOf({Check("a", plumb::plans::report::DriftStatus::kInSync)}), kCx).empty());
  CHECK(Lines(t.Update(DriftNodeOf({Check("a", plumb::plans::report::DriftStatus::kDrift, "7")}), kCx)) ==
        std::vector<std::string>{"drift a intent"});
  CHECK(t.Update(DriftNodeOf({Check("a", plumb::plans::report::DriftStatus::kDrift, "7")}), kCx).empty());
  auto changed = t.Update(DriftNodeOf({Check("a", plumb::plans::report::DriftStatus::kDrift, "8")}), kCx);
  REQUIRE(changed.size() == 1);
  CHECK(changed[0].live == "8");
  CHECK(Lines(t.Update(DriftNodeOf({Check("a", plumb::plans::report::DriftStatus::kDrift, "8", 10)}), kCx)) ==
        std::vector<std::string>{"drift a intent"});   // a new pin, still drifted
  auto cleared = t.Update(DriftNodeOf({Check("a", plumb::plans::report::DriftStatus::kInSync, nullptr, 10)}), kCx);
  REQUIRE(Lines(cleared) == std::vector<std::string>{"drift_cleared a in_sync"});
  CHECK(cleared[0].live == 10);
}

TEST_CASE("tracker: drift that becomes waived, unchecked or unpinned is cleared with that reason") {
  DriftTracker t;
  t.Update(DriftNodeOf({Check("a", plumb::plans::report::DriftStatus::kDrift, "7"), Check("b", plumb::plans::report::DriftStatus::kDrift, "7"),
                 Check("c", plumb::plans::report::DriftStatus::kDrift, "7")}),
           kCx);
  auto es = t.Update(DriftNodeOf({Check("a", plumb::plans::report::DriftStatus::kWaived, "7"), Check("b", plumb::plans::report::DriftStatus::kUnchecked)}),
                     kCx);
  CHECK(Lines(es) == std::vector<std::string>{"drift_cleared a waived", "drift_cleared b unchecked",
                                              "drift_cleared c unpinned"});
}

TEST_CASE("tracker: an unreadable node's drift is unknown, not cleared; when it is read again "
          "only what changed meanwhile is an event") {
  DriftTracker t;
  t.Update(DriftNodeOf({Check("a", plumb::plans::report::DriftStatus::kDrift, "7"), Check("b", plumb::plans::report::DriftStatus::kInSync)}), kCx);
  CHECK(Lines(t.Update(Unreadable("refused"), kCx)) ==
        std::vector<std::string>{"node_unreadable refused"});
  CHECK(t.Update(Unreadable("refused"), kCx).empty());   // still down: said once
  CHECK(Lines(t.Update(Unreadable("HOST KEY CHANGED"), kCx)) ==
        std::vector<std::string>{"node_unreadable HOST KEY CHANGED"});   // a new reason is news
  CHECK(t.Find("n1") != nullptr);
  CHECK_FALSE(t.Find("n1")->readable);
  CHECK(t.Report().unreadable_nodes == 1);
  // Back: a still drifted, b drifted while it was away.
  CHECK(Lines(t.Update(DriftNodeOf({Check("a", plumb::plans::report::DriftStatus::kDrift, "7"), Check("b", plumb::plans::report::DriftStatus::kDrift, "1")}),
                       kCx)) == std::vector<std::string>{"node_readable", "drift b intent"});
}

TEST_CASE("tracker: a node first seen unreadable says so; Forget drops it from the report") {
  DriftTracker t;
  CHECK(Lines(t.Update(Unreadable("timeout"), kCx)) ==
        std::vector<std::string>{"node_unreadable timeout"});
  DriftNode other = DriftNodeOf({Check("a", plumb::plans::report::DriftStatus::kDrift, "7")});
  other.node = "n0";
  t.Update(other, kCx);
  auto& r = t.Report();
  REQUIRE(r.nodes.size() == 2);
  CHECK(r.nodes[0].node == "n0");   // by name
  CHECK(r.verdict == plans::report::DriftVerdict::kDrift);
  CHECK(r.drift_keys == 1);
  t.Forget("n0");
  CHECK(t.Report().nodes.size() == 1);
  CHECK(t.Report().verdict == plans::report::DriftVerdict::kPartial);
}

TEST_CASE("tracker: each member of a key is its own row; an event names the member and says why") {
  // Two InfiniBand ports off their pin (one key, two rows), and a driver row whose values read
  // the same: each event names its port, or says why (issue 33).
  auto port = [](const std::string& member, nlohmann::json live) {
    DriftCheck c = Check("fabric.infiniband.rate_gbps", plumb::plans::report::DriftStatus::kDrift, std::move(live), 400);
    c.member = member;
    return c;
  };
  DriftCheck driver = Check("nvidia.driver", plumb::plans::report::DriftStatus::kDrift, "550.90.07", "550.90.07");
  driver.why = "nvidia-driver-550 is not (fully) installed";
  DriftTracker t;
  auto e = t.Update(DriftNodeOf({port("mlx5_0 port 1", 100.0), port("mlx5_3 port 1", 100.0), driver}), kCx);
  REQUIRE(e.size() == 3);
  CHECK(e[0].member == "mlx5_0 port 1");
  CHECK(e[1].member == "mlx5_3 port 1");
  CHECK(e[2].why == "nvidia-driver-550 is not (fully) installed");
  CHECK(e[0].ToJson().dump().find(R"("key":"fabric.infiniband.rate_gbps","member":"mlx5_0 port 1")") !=
        std::string::npos);
  CHECK(e[2].ToJson().dump().find(R"("reason":"intent","why":"nvidia-driver-550 is not (fully) installed")") !=
        std::string::npos);
  // Unchanged: nothing. One port back on its pin: cleared, that port named, in sync (the key's
  // row now names the other port only).
  CHECK(t.Update(DriftNodeOf({port("mlx5_0 port 1", 100.0), port("mlx5_3 port 1", 100.0), driver}), kCx).empty());
  auto cleared = t.Update(DriftNodeOf({port("mlx5_3 port 1", 100.0), driver}), kCx);
  REQUIRE(cleared.size() == 1);
  CHECK(cleared[0].kind == EventKind::kDriftCleared);
  CHECK(cleared[0].member == "mlx5_0 port 1");
  CHECK(cleared[0].reason == "in_sync");
  // The why changes (another package missing now): a new drift event.
  driver.why = "cuda-drivers-550 is not (fully) installed";
  auto why = t.Update(DriftNodeOf({port("mlx5_3 port 1", 100.0), driver}), kCx);
  REQUIRE(why.size() == 1);
  CHECK(why[0].why == "cuda-drivers-550 is not (fully) installed");
}
