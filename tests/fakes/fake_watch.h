#pragma once
/// Fakes for plans::watch::Watcher, in the style of FakeCluster: simulated nodes whose shells
/// answer the real probe script of the kernel and sysctl modules (sections and markers built
/// from the script's own nonce, so the real splitter and parsers read them), a pool that runs
/// probes on the calling thread, a cluster repo in memory whose ref can move, and a sink that
/// keeps the events. Time is a FakeClock: a node's state can change at a given fake time.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"
#include "plans/observe/gather.h"
#include "plans/watch/desired_source.h"
#include "plans/watch/task_pool.h"
#include "plans/watch/watch_event.h"

namespace plumb::fakes {

/// One simulated node: what its tools print, and whether it answers at all.
struct WatchNode {
  std::string release = "5.15.0-105-generic";
  std::string boot_id = "11111111-2222-4333-8444-555555555555";
  std::map<std::string, std::string> sysctl = {{"vm.swappiness", "60"},
                                               {"net.core.rmem_max", "212992"}};
  /// When set, the node cannot be read: every Run fails with this code ("ssh.refused"...).
  std::string down;
  /// A node without sha256sum: a re-probe always prints the whole output.
  bool no_sha256sum = false;
};

/// The ShellFactory of a fleet of WatchNodes. Records every session opened and closed and every
/// command run, with the fake time it ran at.
class WatchFleet final : public plans::ShellFactory {
 public:
  explicit WatchFleet(FakeClock& clock) : clock_(clock) {}

  WatchNode& Add(const std::string& name) { return nodes_[name]; }
  WatchNode& node(const std::string& name) { return nodes_.at(name); }
  /// Runs `change` on the first probe of any node at or after fake time `at`.
  void At(plans::Clock::TimePoint at, std::function<void(WatchFleet&)> change);

  std::unique_ptr<transport::Shell> Open(const inventory::Node& node) override;

  struct Call {
    std::string node;
    plans::Clock::TimePoint at;
    std::string command;
    bool ok;
  };
  std::vector<Call> calls;                ///< every Run, in order
  std::map<std::string, int> opened;      ///< sessions opened per node
  std::map<std::string, int> closed;      ///< sessions closed (shell destroyed) per node
  /// Calls on `node` (all nodes when empty).
  std::vector<Call> CallsOf(const std::string& node) const;

  /// The output the kernel + sysctl probe gives for `node` under `script`'s nonce.
  std::string ProbeOutput(const std::string& node, std::string_view script) const;
  Result<transport::CommandOutput> RunOn(const std::string& node, std::string_view command);

 private:
  FakeClock& clock_;
  std::map<std::string, WatchNode> nodes_;
  std::vector<std::pair<plans::Clock::TimePoint, std::function<void(WatchFleet&)>>> changes_;
};

/// Runs each task at Submit on the calling thread; waiting is sleeping on the fake clock.
class InlinePool final : public plans::watch::TaskPool {
 public:
  explicit InlinePool(FakeClock& clock) : clock_(clock) {}
  void Submit(std::function<void()> task) override { task(); }
  void WaitForAny(std::chrono::milliseconds d) override { clock_.Sleep(d); }
  void Drain() override {}

 private:
  FakeClock& clock_;
};

/// A cluster repo in memory: commits are file maps; the ref names `head` (changed by tests).
class MemoryRepo final : public plans::watch::DesiredSource {
 public:
  /// Adds a commit (a 40-hex id made from `label`) and returns its id.
  std::string Commit(const std::string& label, std::map<std::string, std::string> files);
  Result<std::string> Resolve() override;
  std::unique_ptr<inventory::LoadedCluster> Load(const std::string& commit) override;
  std::string ref() const override { return "main"; }

  std::string head;
  bool resolve_fails = false;
  int loads = 0;

 private:
  std::map<std::string, std::map<std::string, std::string>> commits_;
};

/// Keeps every event.
class EventLog final : public plans::watch::EventSink {
 public:
  Status Emit(const plans::watch::WatchEvent& e) override;
  std::vector<plans::watch::WatchEvent> events;
  /// Called after each event (a test can stop the watch from here).
  std::function<void(const plans::watch::WatchEvent&)> on_event;
  /// "kind node key" of each event, e.g. "drift n2 sysctl.vm.swappiness", "node_rebooted n3".
  std::vector<std::string> Lines() const;
};

}  // namespace plumb::fakes
