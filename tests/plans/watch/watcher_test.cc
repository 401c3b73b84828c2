// The watch loop with fakes for every side (tests/fakes/fake_watch.h): simulated nodes answering
// the real kernel and sysctl probes, a pool that runs probes inline, a fake clock, a cluster repo
// in memory whose ref moves. Hours of watching run in milliseconds, deterministically.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>

#include <fmt/format.h>

#include "fakes/fake_watch.h"
#include "modules/registry.h"
#include "plans/report/prom_grammar.h"
#include "plans/watch/watcher.h"

using namespace plumb;
using namespace std::chrono_literals;
using plans::watch::EventKind;
using plans::watch::WatchEvent;

namespace {

const plans::Clock::TimePoint kT0 = plans::Clock::TimePoint(std::chrono::seconds(1798761600));

std::map<std::string, std::string> Repo(int nodes, const std::string& stack,
                                        const std::string& waivers = "") {
  std::string inv = "cluster: t\ndefaults:\n  ssh: { user: root, known_hosts: known_hosts }\nnodes:\n";
  for (int i = 1; i <= nodes; ++i)
    inv += fmt::format("  - {{ name: n{}, address: n{}.t.example, groups: [gpu] }}\n", i, i);
  inv += "groups:\n  gpu: { stack: base, rollout: roll }\n";
  std::map<std::string, std::string> files = {{"inventory.yaml", inv},
                                              {"stacks/base.yaml", stack},
                                              {"rollouts/roll.yaml", "max_unavailable: 1\n"}};
  if (!waivers.empty()) files["waivers.yaml"] = waivers;
  return files;
}

const char* kWatchStack = "kernel: 5.15.0-105-generic\nsysctl: { vm.swappiness: 60 }\n";

// Forwards to a module and counts what the watch asks of it: parses (probe outputs read) and
// diffs (nodes judged).
class Counting final : public modules::Module {
 public:
  explicit Counting(const modules::Module* m) : m_(m) {}
  const modules::ModuleInfo& Info() const override { return m_->Info(); }
  std::string ProbeScript() const override { return m_->ProbeScript(); }
  Result<modules::Facts> ParseProbe(std::string_view out, int st) const override {
    ++parses;
    return m_->ParseProbe(out, st);
  }
  std::vector<modules::Action> Diff(const nlohmann::json& d, const modules::Facts& f) const override {
    ++diffs;
    return m_->Diff(d, f);
  }
  mutable std::atomic<int> parses{0}, diffs{0};

 private:
  const modules::Module* m_;
};

// The watcher owns its ShellFactory; this one hands out the fleet's shells.
struct FleetFactory final : plans::ShellFactory {
  explicit FleetFactory(fakes::WatchFleet& f) : fleet(f) {}
  std::unique_ptr<transport::Shell> Open(const inventory::Node& n) override { return fleet.Open(n); }
  fakes::WatchFleet& fleet;
};

struct WatchWorld {
  fakes::FakeClock clock{kT0};
  fakes::WatchFleet fleet{clock};
  fakes::InlinePool pool{clock};
  fakes::MemoryRepo repo;
  fakes::EventLog events;
  Counting kernel{modules::FindModule("kernel")};
  Counting sysctl{modules::FindModule("sysctl")};
  std::atomic<bool> stop{false}, reload{false};
  std::vector<std::string> textfiles, log;
  int factories = 0;
  plans::watch::WatchOptions opt;
  std::unique_ptr<plans::watch::Watcher> watcher;

  explicit WatchWorld(int nodes = 4, const std::string& stack = kWatchStack, const std::string& waivers = "") {
    for (int i = 1; i <= nodes; ++i) fleet.Add(fmt::format("n{}", i));
    repo.head = repo.Commit("c1", Repo(nodes, stack, waivers));
    opt.interval = 60s;
    opt.seed = 42;
  }

  int Run(int rounds) {
    opt.rounds = rounds;
    plans::watch::WatchDeps deps;
    deps.desired = &repo;
    deps.shells = [this](const inventory::Cluster&) {
      ++factories;
      return std::make_unique<FleetFactory>(fleet);
    };
    deps.pool = &pool;
    deps.clock = &clock;
    deps.events = &events;
    deps.modules = {&kernel, &sysctl};
    deps.write_textfile = [this](const std::string& t) {
      textfiles.push_back(t);
      return OkStatus();
    };
    deps.log = [this](const std::string& line) { log.push_back(line); };
    watcher = std::make_unique<plans::watch::Watcher>(deps, opt);
    Status st = watcher->Start();
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.error().ToString()));
    plans::watch::WatchControl control{&stop, &reload};
    return watcher->Run(control);
  }

  std::vector<WatchEvent> Of(EventKind k) const {
    std::vector<WatchEvent> out;
    for (const auto& e : events.events)
      if (e.kind == k) out.push_back(e);
    return out;
  }
};

double Seconds(plans::Clock::TimePoint t) { return std::chrono::duration<double>(t - kT0).count(); }

double EventSeconds(const WatchEvent& e) { return Seconds(*plans::ParseRfc3339(e.time)); }

bool WatchHas(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("watch --once: every node read once over its own session; the drift it finds is an event") {
  WatchWorld w;
  w.fleet.node("n2").sysctl["vm.swappiness"] = "7";
  w.opt.spread = 0;
  CHECK(w.Run(1) == 2);   // drift's exit code

  CHECK(w.events.Lines() == std::vector<std::string>{"drift n2 sysctl.vm.swappiness"});
  const WatchEvent& e = w.events.events.at(0);
  CHECK(e.live == "7");
  CHECK(e.desired == 60);
  CHECK(e.commit == w.repo.head);
  CHECK(e.cluster == "t");
  CHECK(e.reason == "intent");   // no marker on the node: drift cannot call it a repair
  CHECK(e.origin.rfind("stacks/base.yaml:2:", 0) == 0);
  CHECK(e.time == plans::Rfc3339(kT0));

  for (const char* n : {"n1", "n2", "n3", "n4"}) {
    CHECK(w.fleet.opened[n] == 1);
    CHECK(w.fleet.closed[n] == 1);   // closed before Run returned
    CHECK(w.fleet.CallsOf(n).size() == 1);
  }
  // Read-only: the one command a node ever gets is the probe script (wrapped to print its
  // output in one go).
  for (const auto& c : w.fleet.calls) {
    CHECK(c.command.rfind("plumb_probe() {\n# plumb probe: read-only\n", 0) == 0);
    CHECK(c.command.find("\n}\nplumb_o=$(plumb_probe)\n") != std::string::npos);
  }

  const std::string m = w.watcher->Metrics();
  CHECK(WatchHas(m, R"(plumb_watch_key_drift{cluster="t",node="n2",key="sysctl.vm.swappiness"} 1)"));
  CHECK(WatchHas(m, R"(plumb_watch_key_drift{cluster="t",node="n1",key="sysctl.vm.swappiness"} 0)"));
  CHECK(WatchHas(m, R"(plumb_watch_key_drift{cluster="t",node="n1",key="kernel"} 0)"));
  CHECK(WatchHas(m, R"(plumb_drift{cluster="t",node="n2",module="sysctl"} 1)"));   // drift's own family
  CHECK(WatchHas(m, R"(plumb_watch_nodes{cluster="t"} 4)"));
  CHECK(WatchHas(m, R"(plumb_watch_unreadable_nodes{cluster="t"} 0)"));
  CHECK(WatchHas(m, R"(plumb_watch_rounds_total{cluster="t"} 1)"));
  CHECK(WatchHas(m, R"(plumb_watch_events_total{cluster="t",event="drift"} 1)"));
  CHECK(WatchHas(m, fmt::format(R"(plumb_watch_last_seen_timestamp_seconds{{cluster="t",node="n3"}} {})",
                           1798761600)));
  testing::PromCheck check = testing::CheckPromText(m);
  INFO((check.problems.empty() ? std::string() : check.problems.front()));
  CHECK(check.problems.empty());
  // --textfile got the same text at the end of the round.
  REQUIRE(w.textfiles.size() == 1);
  CHECK(w.textfiles[0] == m);
}

TEST_CASE("watch: sessions stay open across rounds, reads are spread over the interval, and a "
          "node that printed the same is neither parsed nor judged again") {
  WatchWorld w;
  w.fleet.node("n4").no_sha256sum = true;   // prints its output whole: the client compares
  w.opt.spread = 1;
  CHECK(w.Run(3) == 0);
  CHECK(w.events.events.empty());
  for (const char* n : {"n1", "n2", "n3", "n4"}) {
    CHECK(w.fleet.opened[n] == 1);   // one session per node for the whole watch
    CHECK(w.fleet.CallsOf(n).size() == 3);
  }
  // 4 nodes over 60 s: each node 15 s after the one before, every round.
  std::vector<double> at;
  for (const auto& c : w.fleet.calls) at.push_back(Seconds(c.at));
  CHECK(at == std::vector<double>{0, 15, 30, 45, 60, 75, 90, 105, 120, 135, 150, 165});
  CHECK(w.sysctl.parses == 4);   // the first read of each node
  CHECK(w.sysctl.diffs == 4);    // ... and its one verdict
  const std::string m = w.watcher->Metrics();
  CHECK(WatchHas(m, R"(plumb_watch_rounds_total{cluster="t"} 3)"));
  // A round starts with its first node and ends with its last: 45 s of a 60 s interval.
  CHECK(WatchHas(m, R"(plumb_watch_round_duration_seconds{cluster="t"} 45.000)"));
}

TEST_CASE("watch: a hand change is an event within one interval plus one round; its repair "
          "clears it") {
  WatchWorld w;
  w.fleet.At(kT0 + 91s, [](fakes::WatchFleet& f) { f.node("n3").sysctl["vm.swappiness"] = "7"; });
  w.fleet.At(kT0 + 200s, [](fakes::WatchFleet& f) { f.node("n3").sysctl["vm.swappiness"] = "60"; });
  CHECK(w.Run(5) == 0);
  REQUIRE(w.events.Lines() == std::vector<std::string>{"drift n3 sysctl.vm.swappiness",
                                                       "drift_cleared n3 sysctl.vm.swappiness"});
  const WatchEvent& drift = w.events.events[0];
  CHECK(drift.live == "7");
  CHECK(EventSeconds(drift) - 91 <= 60 + 45);   // one interval plus one round
  CHECK(EventSeconds(drift) == 150);            // n3's next read after the change
  const WatchEvent& cleared = w.events.events[1];
  CHECK(cleared.reason == "in_sync");
  CHECK(EventSeconds(cleared) == 210);
  CHECK(w.sysctl.parses == 4 + 2);   // only n3's two changed outputs were read again
}

TEST_CASE("watch: a reboot is an event, not a crash: unreadable, retried with backoff, read "
          "again with a new boot id") {
  WatchWorld w;
  const std::string new_boot = "99999999-2222-4333-8444-555555555555";
  w.fleet.At(kT0 + 70s, [&](fakes::WatchFleet& f) {
    f.node("n2").down = "ssh.refused";
    f.node("n2").boot_id = new_boot;
  });
  w.fleet.At(kT0 + 100s, [](fakes::WatchFleet& f) { f.node("n2").down.clear(); });
  std::string metrics_while_down;
  w.events.on_event = [&](const WatchEvent& e) {
    if (e.kind == EventKind::kNodeUnreadable) metrics_while_down = w.watcher->Metrics();
  };
  CHECK(w.Run(3) == 0);
  CHECK(w.events.Lines() ==
        std::vector<std::string>{"node_unreadable n2", "node_rebooted n2", "node_readable n2"});
  const WatchEvent down = w.Of(EventKind::kNodeUnreadable).at(0);
  CHECK(down.reason.find("ssh.refused") != std::string::npos);
  CHECK(EventSeconds(down) == 75);   // n2's slot in round 2
  const WatchEvent reboot = w.Of(EventKind::kNodeRebooted).at(0);
  CHECK(reboot.previous == "11111111-2222-4333-8444-555555555555");
  CHECK(reboot.boot_id == new_boot);
  CHECK(WatchHas(metrics_while_down, R"(plumb_node_readable{cluster="t",node="n2"} 0)"));
  CHECK(WatchHas(metrics_while_down, R"(plumb_watch_unreadable_nodes{cluster="t"} 1)"));
  CHECK(metrics_while_down.find(R"(plumb_watch_key_drift{cluster="t",node="n2")") == std::string::npos);

  // Retries while it was down came ever further apart (exponential backoff with jitter), and
  // never more than a few: the node is not hammered.
  std::vector<double> tries;
  for (const auto& c : w.fleet.CallsOf("n2"))
    if (Seconds(c.at) >= 75 && Seconds(c.at) < 101) tries.push_back(Seconds(c.at));
  REQUIRE(tries.size() >= 3);
  CHECK(tries.size() <= 7);
  for (size_t i = 2; i < tries.size(); ++i) CHECK(tries[i] - tries[i - 1] >= tries[i - 1] - tries[i - 2]);
  // The other nodes never noticed.
  for (const char* n : {"n1", "n3", "n4"}) CHECK(w.fleet.CallsOf(n).size() == 3);
}

TEST_CASE("watch: a new commit that changes a pin is judged at once from every node's kept "
          "facts, without reading the nodes again") {
  WatchWorld w;
  const std::string c1 = w.repo.head;
  const std::string c2 = w.repo.Commit("c2", Repo(4, "kernel: 5.15.0-105-generic\nsysctl: { vm.swappiness: 10 }\n"));
  size_t calls_at_switch = 0;
  double switched = 0;
  w.fleet.At(kT0 + 100s, [&](fakes::WatchFleet& f) {
    w.repo.head = c2;   // a fetch moved origin/main
    calls_at_switch = f.calls.size();
    switched = Seconds(w.clock.Now());
  });
  size_t calls_at_events = 0;
  w.events.on_event = [&](const WatchEvent& e) {
    if (e.kind == EventKind::kDrift && calls_at_events == 0) calls_at_events = w.fleet.calls.size();
  };
  w.opt.ref_poll = 5s;
  CHECK(w.Run(3) == 2);
  REQUIRE(w.events.events.size() == 5);
  const WatchEvent& moved = w.events.events[0];
  CHECK(moved.kind == EventKind::kDesiredChanged);
  CHECK(moved.previous == c1);
  CHECK(moved.commit == c2);
  CHECK(EventSeconds(moved) - switched <= 5);   // within one --ref-poll
  for (size_t i = 1; i < 5; ++i) {
    const WatchEvent& e = w.events.events[i];
    CHECK(e.kind == EventKind::kDrift);
    CHECK(e.node == fmt::format("n{}", i));
    CHECK(e.key == "sysctl.vm.swappiness");
    CHECK(e.desired == 10);
    CHECK(e.live == "60");
    CHECK(e.commit == c2);
    CHECK(e.time == moved.time);
  }
  // Judged from the facts kept: no node was read between the ref moving and the drift events.
  CHECK(calls_at_events == calls_at_switch + 1);   // +1: the read that moved the ref
  CHECK(w.sysctl.parses == 4);
}

TEST_CASE("watch: a new commit re-judges 300 nodes from their kept facts: every node gets its "
          "verdict, none twice") {
  constexpr int kNodes = 300;
  WatchWorld w(kNodes);
  const std::string c2 =
      w.repo.Commit("c2", Repo(kNodes, "kernel: 5.15.0-105-generic\nsysctl: { vm.swappiness: 10 }\n"));
  w.fleet.At(kT0 + 100s, [&](fakes::WatchFleet&) { w.repo.head = c2; });
  w.opt.ref_poll = 5s;
  CHECK(w.Run(3) == 2);
  std::map<std::string, int> drift_events;
  for (const WatchEvent& e : w.Of(EventKind::kDrift)) {
    CHECK(e.commit == c2);
    ++drift_events[e.node];
  }
  CHECK(drift_events.size() == kNodes);
  for (const auto& node_events : drift_events) CHECK_MESSAGE(node_events.second == 1, node_events.first);
  CHECK(w.sysctl.parses == kNodes);   // judged from kept facts, each node parsed once
  const std::string m = w.watcher->Metrics();
  for (const char* node : {"n1", "n129", "n256", "n300"})
    CHECK(WatchHas(m, fmt::format(R"(plumb_watch_key_drift{{cluster="t",node="{}",key="sysctl.vm.swappiness"}} 1)", node)));
}

TEST_CASE("watch: a commit that does not load is an event; the last good one is watched on") {
  WatchWorld w;
  const std::string c1 = w.repo.head;
  const std::string bad = w.repo.Commit("bad", {{"inventory.yaml", "cluster: [\n"}});
  w.fleet.At(kT0 + 100s, [&](fakes::WatchFleet&) { w.repo.head = bad; });
  w.fleet.At(kT0 + 130s, [&](fakes::WatchFleet& f) { f.node("n1").sysctl["vm.swappiness"] = "1"; });
  w.opt.ref_poll = 5s;
  CHECK(w.Run(4) == 2);
  REQUIRE(w.events.Lines() == std::vector<std::string>{"desired_error", "drift n1 sysctl.vm.swappiness"});
  const WatchEvent& err = w.events.events[0];
  CHECK(err.commit == bad);
  CHECK(err.previous == c1);
  CHECK(!err.reason.empty());
  CHECK(w.events.events[1].commit == c1);   // still judged against the last good commit
  CHECK(w.repo.loads == 2);                  // the bad commit was tried once, not every poll
}

TEST_CASE("watch: waivers apply as in drift") {
  WatchWorld w(4, kWatchStack,
          "waivers:\n  - { nodes: n2, keys: 'sysctl.*', reason: tuning test, owner: ops, "
          "expires: 2099-01-01 }\n");
  w.fleet.node("n2").sysctl["vm.swappiness"] = "7";
  w.fleet.node("n3").sysctl["vm.swappiness"] = "7";
  w.opt.spread = 0;
  CHECK(w.Run(1) == 2);
  CHECK(w.events.Lines() == std::vector<std::string>{"drift n3 sysctl.vm.swappiness"});
  const std::string m = w.watcher->Metrics();
  CHECK(WatchHas(m, R"(plumb_watch_key_drift{cluster="t",node="n2",key="sysctl.vm.swappiness"} 0)"));
  CHECK(WatchHas(m, R"(plumb_drift_waived_keys{cluster="t",node="n2"} 1)"));
}

TEST_CASE("watch: a stop request (SIGINT/SIGTERM) ends the watch with 0 and closes every "
          "session") {
  WatchWorld w;
  w.fleet.At(kT0 + 100s, [&](fakes::WatchFleet&) { w.stop = true; });
  CHECK(w.Run(0) == 0);
  for (const char* n : {"n1", "n2", "n3", "n4"}) {
    CHECK(w.fleet.opened[n] == 1);
    CHECK(w.fleet.closed[n] == 1);
  }
  CHECK(w.fleet.calls.size() <= 8);   // nothing started after the stop
}

TEST_CASE("watch: SIGHUP reads the ref again at once") {
  WatchWorld w;
  const std::string c2 = w.repo.Commit("c2", Repo(4, "kernel: 5.15.0-105-generic\nsysctl: { vm.swappiness: 10 }\n"));
  w.opt.ref_poll = std::chrono::hours(1);
  w.fleet.At(kT0 + 30s, [&](fakes::WatchFleet&) {
    w.repo.head = c2;
    w.reload = true;
  });
  CHECK(w.Run(2) == 2);
  const auto moved = w.Of(EventKind::kDesiredChanged);
  REQUIRE(moved.size() == 1);
  CHECK(EventSeconds(moved[0]) == 30);
  CHECK_FALSE(w.reload.load());   // seen and cleared
}

TEST_CASE("watch: a node that leaves the inventory has its session closed and its metrics "
          "dropped; a new node is read at once") {
  WatchWorld w;
  w.fleet.Add("n5");
  auto files = Repo(5, kWatchStack);
  // n4 leaves, n5 joins.
  std::string& inv = files["inventory.yaml"];
  inv.erase(inv.find("  - { name: n4"), inv.find("  - { name: n5") - inv.find("  - { name: n4"));
  const std::string c2 = w.repo.Commit("c2", files);
  double switched = 0;
  w.fleet.At(kT0 + 50s, [&](fakes::WatchFleet&) {
    w.repo.head = c2;
    switched = Seconds(w.clock.Now());
  });
  w.opt.ref_poll = 5s;
  CHECK(w.Run(3) == 0);
  CHECK(w.fleet.opened["n4"] == 1);
  CHECK(w.fleet.closed["n4"] == 1);
  const auto n5 = w.fleet.CallsOf("n5");
  REQUIRE(!n5.empty());
  CHECK(Seconds(n5[0].at) <= switched + 5);   // read as soon as the new commit is seen
  const std::string m = w.watcher->Metrics();
  CHECK(m.find("node=\"n4\"") == std::string::npos);
  CHECK(WatchHas(m, R"(plumb_watch_nodes{cluster="t"} 4)"));
  CHECK(WatchHas(m, R"(plumb_watch_key_drift{cluster="t",node="n5",key="kernel"} 0)"));
}

TEST_CASE("watch: new SSH settings in a commit open every session again with them") {
  WatchWorld w;
  auto files = Repo(4, kWatchStack);
  std::string& inv = files["inventory.yaml"];
  inv.replace(inv.find("user: root"), 10, "user: admin");
  const std::string c2 = w.repo.Commit("c2", files);
  w.fleet.At(kT0 + 50s, [&](fakes::WatchFleet&) { w.repo.head = c2; });
  w.opt.ref_poll = 5s;
  CHECK(w.Run(3) == 0);
  CHECK(w.factories == 2);
  for (const char* n : {"n1", "n2", "n3", "n4"}) CHECK(w.fleet.opened[n] == 2);
}

TEST_CASE("watch: nothing to watch is an error at start") {
  WatchWorld w;
  w.repo.resolve_fails = true;
  plans::watch::WatchDeps deps;
  deps.desired = &w.repo;
  deps.clock = &w.clock;
  deps.pool = &w.pool;
  deps.events = &w.events;
  plans::watch::Watcher watcher(deps, w.opt);
  Status st = watcher.Start();
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == "source.unknown-ref");

  w.repo.resolve_fails = false;
  w.opt.limit = "gpu*";
  plans::watch::Watcher limited(deps, w.opt);
  Status st2 = limited.Start();
  REQUIRE_FALSE(st2.ok());
  CHECK(st2.error().code == "limit.no-match");
}
