#pragma once
/// plumb watch: every node read again and again over one SSH session kept open per node, each
/// read compared with the desired state at --ref, every change an event and a metric.
///
///   - Sessions: one per node, opened by its first probe (at most `fanout` probes, and so
///     handshakes, at once), then kept; a dropped session is opened again by the next probe
///     (SshShell reconnects on demand), a failed node is retried with backoff and jitter.
///   - Rounds: every node is read once per `interval`, node starts spread over `spread` of it.
///     A node that printed exactly what it printed last time is not parsed or judged again.
///   - Judging: the nodes whose facts changed are judged together by `plumb drift`'s code
///     (drift_evaluator.h); the ref is resolved every `ref_poll` (and on SIGHUP) and a new
///     commit re-judges every node from its kept facts, without reading the nodes again.
///   - Output: events (watch_event.h) to an EventSink, metrics on demand (Metrics(), from any
///     thread) and, at the end of each round, to `write_textfile`.
///   - Read-only: the only command sent to a node is the probe script.
///
/// The loop runs on the caller's thread; probes run on a TaskPool. Time comes from a Clock, so
/// the unit tests run hours of watching in milliseconds with fakes for every dependency.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "inventory/load.h"
#include "modules/module.h"
#include "plans/core/clock.h"
#include "plans/observe/gather.h"
#include "plans/watch/desired_source.h"
#include "plans/watch/drift_evaluator.h"
#include "plans/watch/drift_tracker.h"
#include "plans/watch/kept_facts.h"
#include "plans/watch/task_pool.h"
#include "plans/watch/watch_event.h"
#include "plans/watch/watch_metrics.h"
#include "schemas/result.h"

namespace plumb::plans::watch {

struct WatchOptions {
  std::chrono::milliseconds interval{std::chrono::seconds(60)};   ///< each node read once per
  double spread = 1.0;        ///< fraction of the interval node starts are spread over (0..1)
  int rounds = 0;             ///< stop after this many complete rounds; 0 = until stopped
  std::string limit;          ///< node patterns (plans/plan/node_select.h); empty = every node
  std::chrono::milliseconds ref_poll{std::chrono::seconds(5)};     ///< how often --ref is resolved
  std::chrono::milliseconds retry_base{std::chrono::seconds(1)};   ///< first retry of a failed node
  unsigned long long seed = 0;   ///< retry jitter; 0 = from the system's random source
};

struct WatchDeps {
  DesiredSource* desired = nullptr;
  /// The ShellFactory for a cluster's SSH settings: asked at start, and again when a new
  /// commit changes defaults.ssh (every session is then opened again with the new settings).
  std::function<std::unique_ptr<ShellFactory>(const inventory::Cluster&)> shells;
  TaskPool* pool = nullptr;
  Clock* clock = nullptr;
  EventSink* events = nullptr;
  /// The modules whose probes run (those with an in-band probe) and whose keys are judged.
  std::vector<const modules::Module*> modules;
  /// Gets the metrics text at the end of every round (--textfile); may be empty.
  std::function<Status(const std::string& text)> write_textfile;
  /// One line for a human (stderr in the real run); may be empty.
  std::function<void(const std::string& line)> log;
};

/// What the loop polls between waits: set from signal handlers in the real run.
struct WatchControl {
  const std::atomic<bool>* stop = nullptr;   ///< SIGINT/SIGTERM: finish and return 0
  std::atomic<bool>* reload = nullptr;       ///< SIGHUP: read the ref again now (cleared here)
};

class Watcher {
 public:
  Watcher(WatchDeps deps, WatchOptions options);
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  /// Loads the desired state at the ref and selects the nodes. An error (the ref does not
  /// resolve, the repo does not load, --limit matches nothing) means there is nothing to watch.
  Status Start();
  /// Watches until `control.stop` (then 0), or until `rounds` rounds are complete (then drift's
  /// exit code for the last verdicts: 0 in sync, 2 drift, 1 some nodes unreadable). 1 when an
  /// event cannot be written. Every session is closed before it returns.
  int Run(const WatchControl& control);

  /// The metrics text now (RenderMetrics). Thread-safe: the HTTP server calls it.
  std::string Metrics();
  /// Nodes watched now.
  size_t node_count() const { return nodes_.size(); }

 private:
  struct NodeState;
  struct ProbeDone;

  // One step each of the loop, in the order Run calls them.
  void CheckRef(bool force);
  void TakeResults();
  void JudgePending();
  void CheckRounds();
  void Dispatch();
  std::chrono::milliseconds TimeToNextWork() const;

  Status Apply(std::unique_ptr<inventory::LoadedCluster> loaded, const std::string& commit);
  void Process(ProbeDone& done);
  void Emit(std::vector<WatchEvent> events);
  void Log(const std::string& line) const;
  Clock::TimePoint SlotTime(const NodeState& n, long long round) const;
  long long SlotRound(const NodeState& n, Clock::TimePoint t) const;   ///< -1 before the first
  void CloseSessions();

  WatchDeps deps_;
  WatchOptions opt_;
  std::mt19937_64 rng_;

  std::unique_ptr<inventory::LoadedCluster> loaded_;   ///< the desired state watched
  std::string commit_;                                 ///< its commit
  std::string failed_commit_;                          ///< a commit that did not load (not retried)
  std::string resolve_error_;                          ///< last Resolve error said (said once)
  std::unique_ptr<ShellFactory> factory_;
  MarkerCommits commits_;
  std::chrono::milliseconds command_timeout_{std::chrono::minutes(2)};

  std::map<std::string, std::unique_ptr<NodeState>> nodes_;   ///< stable addresses for probes
  std::set<std::string> to_judge_;
  std::mutex done_mu_;
  std::vector<ProbeDone> done_;           ///< probe results, filled by the pool's workers

  Clock::TimePoint start_{};
  Clock::TimePoint last_ref_check_{};
  std::string today_;
  long long round_ = 0;                                     ///< the oldest incomplete round
  std::map<long long, Clock::TimePoint> round_started_;     ///< rounds with a probe started
  bool write_failed_ = false;
  const WatchControl* control_ = nullptr;

  mutable std::mutex mu_;    ///< guards what Metrics() reads: tracker_, stats_, loaded_
  DriftTracker tracker_;
  WatchStats stats_;
};

}  // namespace plumb::plans::watch
