#include "plans/watch/watcher.h"

#include <algorithm>

#include <fmt/format.h>

#include "plans/plan/node_select.h"
#include "plans/watch/schedule.h"

namespace plumb::plans::watch {
namespace {

long long UnixSeconds(Clock::TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

// The error of a load that failed, in one line: its first error.
std::string FirstError(const inventory::LoadedCluster& l) {
  for (const Diagnostic& d : l.diags.items())
    if (d.severity == Severity::kError) return d.ToString();
  return "did not load";
}

bool SameSsh(const inventory::SshSettings& a, const inventory::SshSettings& b) {
  return a.user == b.user && a.port == b.port && a.known_hosts == b.known_hosts &&
         a.identity == b.identity && a.connect_timeout_s == b.connect_timeout_s &&
         a.command_timeout_s == b.command_timeout_s && a.jump == b.jump;
}

}  // namespace

/// One node as the watch knows it. Owned by the loop thread; a probe in flight uses only
/// `shell` (and `node`), which the loop leaves alone until the probe's result is taken.
struct Watcher::NodeState {
  inventory::Node node;                      ///< as the current commit's inventory has it
  std::unique_ptr<transport::Shell> shell;   ///< its session, opened by the first probe
  std::chrono::milliseconds offset{0};       ///< its slot in every round
  bool in_flight = false;
  bool retired = false;      ///< left the inventory while in flight: dropped when it returns
  bool reopen = false;       ///< new SSH settings while in flight: new session when it returns
  Clock::TimePoint next_due{};
  long long done_round = -1;                 ///< the last round it has a result for
  int failures = 0;                          ///< failed reads in a row
  bool retrying = false;     ///< next_due is a retry after a failure, not the node's slot
  bool ever_read = false;
  bool readable = false;
  std::string unreadable_reason;
  std::string raw_digest;    ///< of the last good read: the same output is not parsed again
  KeptFacts kept;            ///< facts of the last good read
  std::string boot_id;
};

/// A probe's result, handed from a worker to the loop.
struct Watcher::ProbeDone {
  std::string node;
  long long round = 0;
  NodeObservation obs;
  bool unchanged = false;
};

Watcher::Watcher(WatchDeps deps, WatchOptions options)
    : deps_(std::move(deps)),
      opt_(std::move(options)),
      rng_(opt_.seed != 0 ? opt_.seed : std::random_device{}()),
      commits_([src = deps_.desired](const std::string& commit) -> Result<DesiredByNode> {
        auto loaded = src->Load(commit);
        if (!loaded->ok())
          return Diagnostic::Error("watch.marker-commit", FirstError(*loaded));
        return std::move(loaded->desired);
      }) {
  if (opt_.interval < std::chrono::milliseconds(1)) opt_.interval = std::chrono::milliseconds(1);
}

Watcher::~Watcher() {
  if (deps_.pool != nullptr) deps_.pool->Drain();
  CloseSessions();
}

void Watcher::Log(const std::string& line) const {
  if (deps_.log) deps_.log(line);
}

Status Watcher::Start() {
  start_ = deps_.clock->Now();
  auto commit = deps_.desired->Resolve();
  if (!commit.ok()) return commit.error();
  auto loaded = deps_.desired->Load(*commit);
  if (!loaded->ok()) {
    return Diagnostic::Error("watch.load",
                             fmt::format("the cluster repo at {} ({}) did not load:\n{}",
                                         deps_.desired->ref(), commit->substr(0, 12),
                                         loaded->diags.ToText()),
                             {}, {}, "run `plumb validate` for the details");
  }
  for (const Diagnostic& d : loaded->diags.items()) Log(d.ToString());
  if (Status st = Apply(std::move(loaded), *commit); !st.ok()) return st;
  if (nodes_.empty())
    return Diagnostic::Error("watch.no-nodes", "no node to watch", {}, {},
                             "check the inventory and --limit");
  last_ref_check_ = start_;
  return OkStatus();
}

// Takes the desired state of a (new) commit: the nodes it selects (sessions of nodes that left
// are closed, new nodes are read at once), the SSH settings, and a verdict for every node read.
Status Watcher::Apply(std::unique_ptr<inventory::LoadedCluster> loaded, const std::string& commit) {
  const inventory::Cluster& cluster = loaded->cluster;
  auto selected = SelectNodes(cluster, opt_.limit);
  if (!selected.ok()) return selected.error();
  const bool new_ssh = factory_ == nullptr || loaded_ == nullptr ||
                       !SameSsh(loaded_->cluster.ssh, cluster.ssh);
  if (new_ssh) factory_ = deps_.shells(cluster);
  command_timeout_ = std::chrono::seconds(std::max(cluster.ssh.command_timeout_s, 1));

  std::vector<const inventory::Node*> chosen = std::move(selected.value());
  std::sort(chosen.begin(), chosen.end(),
            [](const inventory::Node* a, const inventory::Node* b) { return a->name < b->name; });
  std::set<std::string> keep;
  const Clock::TimePoint now = deps_.clock->Now();
  const bool starting = loaded_ == nullptr;
  for (size_t i = 0; i < chosen.size(); ++i) {
    const inventory::Node& n = *chosen[i];
    keep.insert(n.name);
    auto [it, fresh] = nodes_.try_emplace(n.name);
    if (fresh) it->second = std::make_unique<NodeState>();
    NodeState& s = *it->second;
    const bool moved = !fresh && (s.node.address != n.address || s.node.ssh_port != n.ssh_port ||
                                  s.node.ssh_jump != n.ssh_jump);
    s.node = n;
    s.offset = SlotOffset(i, chosen.size(), opt_.interval, opt_.spread);
    if (fresh) {
      // At start, the first round's slot; a node a new commit adds is read at once (its slot
      // applies from its next round).
      s.next_due = starting ? start_ + s.offset : now;
      s.done_round = round_ - 1;
    }
    s.retired = false;
    if (moved || new_ssh) {
      // The session was opened with the old address or settings.
      if (s.in_flight) s.reopen = true;
      else s.shell.reset();
    }
  }
  std::vector<std::string> gone;
  for (auto& [name, s] : nodes_)
    if (!keep.count(name)) gone.push_back(name);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& name : gone) {
      tracker_.Forget(name);
      stats_.last_seen_unix.erase(name);
      to_judge_.erase(name);
      if (nodes_[name]->in_flight) nodes_[name]->retired = true;
      else nodes_.erase(name);   // closes its session
    }
    loaded_ = std::move(loaded);
    stats_.nodes = keep.size();
  }
  commit_ = commit;
  failed_commit_.clear();
  for (auto& [name, s] : nodes_)
    if (s->ever_read && !s->retired) to_judge_.insert(name);
  return OkStatus();
}

void Watcher::CheckRef(bool force) {
  last_ref_check_ = deps_.clock->Now();
  auto commit = deps_.desired->Resolve();
  if (!commit.ok()) {
    // A ref that stops resolving (a fetch in progress, a deleted branch) is said once; the
    // watch goes on against the last good commit.
    if (commit.error().message != resolve_error_) {
      resolve_error_ = commit.error().message;
      Log("warning: " + commit.error().ToString() + " (still watching " + commit_.substr(0, 12) + ")");
    }
    return;
  }
  resolve_error_.clear();
  if (!force && (*commit == commit_ || *commit == failed_commit_)) return;
  const std::string now = Rfc3339(deps_.clock->Now());
  const std::string cluster = loaded_ ? loaded_->cluster.name : std::string();
  auto loaded = deps_.desired->Load(*commit);
  Status applied = loaded->ok() ? OkStatus()
                                : Status(Diagnostic::Error("watch.load", FirstError(*loaded)));
  const std::string previous = commit_;
  if (applied.ok()) applied = Apply(std::move(loaded), *commit);
  WatchEvent e;
  e.time = now;
  e.cluster = cluster;
  e.commit = *commit;
  if (!applied.ok()) {
    failed_commit_ = *commit;
    e.kind = EventKind::kDesiredError;
    e.reason = applied.error().message;
    e.previous = previous;
    Log(fmt::format("error: {} at {} does not load; still watching {}: {}", deps_.desired->ref(),
                    commit->substr(0, 12), previous.substr(0, 12), applied.error().message));
  } else {
    e.kind = EventKind::kDesiredChanged;
    e.previous = previous;
    Log(fmt::format("{} moved: {} -> {}; judging {} node(s) again", deps_.desired->ref(),
                    previous.substr(0, 12), commit->substr(0, 12), to_judge_.size()));
  }
  Emit({std::move(e)});
}

void Watcher::Emit(std::vector<WatchEvent> events) {
  for (WatchEvent& e : events) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.events[e.kind];
    }
    if (write_failed_) continue;
    if (Status st = deps_.events->Emit(e); !st.ok()) {
      write_failed_ = true;
      Log("error: " + st.error().ToString());
    }
  }
}

Clock::TimePoint Watcher::SlotTime(const NodeState& n, long long round) const {
  return start_ + opt_.interval * round + n.offset;
}

long long Watcher::SlotRound(const NodeState& n, Clock::TimePoint t) const {
  const Clock::TimePoint first = start_ + n.offset;
  if (t < first) return -1;
  return (t - first) / opt_.interval;
}

void Watcher::Dispatch() {
  const Clock::TimePoint now = deps_.clock->Now();
  for (auto& [name, sp] : nodes_) {
    NodeState& s = *sp;
    if (s.in_flight || s.retired || s.next_due > now) continue;
    if (control_ != nullptr && control_->stop != nullptr && control_->stop->load()) return;
    // The round a read counts for: its slot's, and never one the node has a result for
    // already, except that a retry counts for the round whose read failed (so retries never
    // run the node ahead of its slots).
    const long long round = std::max(SlotRound(s, now), s.retrying ? s.done_round : s.done_round + 1);
    round_started_.try_emplace(round, now);
    if (s.shell == nullptr) s.shell = factory_->Open(s.node);
    s.in_flight = true;
    transport::Shell* shell = s.shell.get();
    // A node read well last time whose session broke since (sshd restarted, a quick reboot)
    // gets one fresh session at once before it counts as unreadable.
    const bool retry_once = s.readable;
    std::string last_raw = s.raw_digest;
    deps_.pool->Submit([this, name = name, shell, round, retry_once, last_raw = std::move(last_raw)] {
      ProbeDone d;
      d.node = name;
      d.round = round;
      if (shell == nullptr) {
        d.obs.node = name;
        d.obs.error = Diagnostic::Error("ssh.io", name + ": no shell for this node");
      } else {
        d.obs = ProbeNodeIfChanged(name, *shell, deps_.modules, command_timeout_, last_raw,
                                   &d.unchanged);
        if (!d.obs.reachable && retry_once && d.obs.error.code == "ssh.io")
          d.obs = ProbeNodeIfChanged(name, *shell, deps_.modules, command_timeout_, last_raw,
                                     &d.unchanged);
      }
      std::lock_guard<std::mutex> lock(done_mu_);
      done_.push_back(std::move(d));
    });
  }
}

void Watcher::TakeResults() {
  std::vector<ProbeDone> done;
  {
    std::lock_guard<std::mutex> lock(done_mu_);
    done.swap(done_);
  }
  for (ProbeDone& d : done) Process(d);
}

void Watcher::Process(ProbeDone& d) {
  auto it = nodes_.find(d.node);
  if (it == nodes_.end()) return;
  NodeState& s = *it->second;
  s.in_flight = false;
  if (s.retired) {
    nodes_.erase(it);   // closes its session
    return;
  }
  if (s.reopen) {
    s.shell.reset();
    s.reopen = false;
  }
  const Clock::TimePoint now = deps_.clock->Now();
  s.done_round = std::max(s.done_round, d.round);
  const Clock::TimePoint next_slot = SlotTime(s, s.done_round + 1);
  std::vector<WatchEvent> events;
  if (d.obs.reachable) {
    s.failures = 0;
    if (!d.unchanged) {
      const std::string boot = BootIdOf(d.obs, deps_.modules);
      if (!boot.empty() && !s.boot_id.empty() && boot != s.boot_id) {
        WatchEvent e;
        e.kind = EventKind::kNodeRebooted;
        e.time = Rfc3339(now);
        e.cluster = loaded_->cluster.name;
        e.node = d.node;
        e.commit = commit_;
        e.previous = s.boot_id;
        e.boot_id = boot;
        events.push_back(std::move(e));
      }
      if (!boot.empty()) s.boot_id = boot;
      s.raw_digest = d.obs.raw_digest;
      s.kept = KeptFacts::From(std::move(d.obs));
      to_judge_.insert(d.node);
    } else if (!s.readable) {
      to_judge_.insert(d.node);   // back, and printing what it printed before it went away
    }
    s.readable = true;
    s.unreadable_reason.clear();
    s.next_due = next_slot;
    s.retrying = false;
    std::lock_guard<std::mutex> lock(mu_);
    stats_.last_seen_unix[d.node] = UnixSeconds(now);
  } else {
    ++s.failures;
    const Diagnostic& err = d.obs.error;
    std::string reason = err.message.empty() ? err.code : err.message;
    if (s.readable || !s.ever_read || reason != s.unreadable_reason) to_judge_.insert(d.node);
    s.readable = false;
    s.unreadable_reason = std::move(reason);
    std::uniform_real_distribution<double> jitter(0.0, 1.0);
    const Clock::TimePoint retry =
        now + RetryDelay(s.failures, opt_.retry_base, opt_.interval, jitter(rng_));
    s.retrying = retry < next_slot;
    s.next_due = std::min(retry, next_slot);
  }
  s.ever_read = true;
  Emit(std::move(events));
}

void Watcher::JudgePending() {
  const Clock::TimePoint now = deps_.clock->Now();
  const std::string time = Rfc3339(now);
  if (time.substr(0, 10) != today_) {
    // A new day: waivers may have expired. Every node read so far is judged again.
    if (!today_.empty())
      for (auto& [name, s] : nodes_)
        if (s->ever_read && !s->retired) to_judge_.insert(name);
    today_ = time.substr(0, 10);
  }
  if (to_judge_.empty()) return;
  std::vector<std::string> names(to_judge_.begin(), to_judge_.end());
  to_judge_.clear();
  auto facts_of = [this](const std::string& name) -> NodeFacts {
    const NodeState& s = *nodes_.at(name);
    if (s.readable) return s.kept.ToNodeFacts();
    NodeFacts f;
    f.readable = false;
    f.unreadable_reason = s.unreadable_reason;
    return f;
  };
  // All pending nodes in one batch: the planner marks a node's missing module facts and the
  // report its unchecked keys from the modules the whole batch has, so judging in chunks
  // could change a verdict.
  std::vector<report::DriftNode> verdicts =
      JudgeNodes(*loaded_, deps_.modules, names, facts_of, commits_, time);
  DriftTracker::Context cx{time, loaded_->cluster.name, commit_};
  std::vector<WatchEvent> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (report::DriftNode& v : verdicts) {
      auto more = tracker_.Update(std::move(v), cx);
      events.insert(events.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
    }
  }
  Emit(std::move(events));
}

void Watcher::CheckRounds() {
  if (nodes_.empty()) return;
  long long done = -1;
  bool first = true;
  for (const auto& [name, s] : nodes_) {
    if (s->retired) continue;
    done = first ? s->done_round : std::min(done, s->done_round);
    first = false;
  }
  while (!first && done >= round_) {
    const Clock::TimePoint now = deps_.clock->Now();
    auto started = round_started_.find(round_);
    const Clock::TimePoint began = started != round_started_.end() ? started->second : now;
    const double seconds = std::chrono::duration<double>(now - began).count();
    std::string text;
    int drifted = 0, unreadable = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.rounds;
      stats_.last_round_seconds = seconds;
      stats_.last_round_end_unix = UnixSeconds(now);
      report::DriftReport& r = tracker_.Report();
      drifted = r.drifted_nodes;
      unreadable = r.unreadable_nodes;
    }
    if (deps_.write_textfile) {
      text = Metrics();
      if (Status st = deps_.write_textfile(text); !st.ok()) Log("warning: " + st.error().ToString());
    }
    Log(fmt::format("round {}: {} node(s) in {:.1f} s at {}: {} drifted, {} unreadable", round_ + 1,
                    nodes_.size(), seconds, commit_.substr(0, 12), drifted, unreadable));
    round_started_.erase(round_started_.begin(), round_started_.upper_bound(round_));
    ++round_;
  }
}

std::chrono::milliseconds Watcher::TimeToNextWork() const {
  const Clock::TimePoint now = deps_.clock->Now();
  Clock::TimePoint next = last_ref_check_ + opt_.ref_poll;
  for (const auto& [name, s] : nodes_)
    if (!s->in_flight && !s->retired) next = std::min(next, s->next_due);
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - now);
  return std::max(wait, std::chrono::milliseconds(0));
}

int Watcher::Run(const WatchControl& control) {
  control_ = &control;
  auto stopping = [&control] { return control.stop != nullptr && control.stop->load(); };
  int exit_code = 0;
  for (;;) {
    if (stopping()) break;
    const bool reload = control.reload != nullptr && control.reload->exchange(false);
    if (reload || deps_.clock->Now() - last_ref_check_ >= opt_.ref_poll) CheckRef(reload);
    TakeResults();
    JudgePending();
    CheckRounds();
    if (write_failed_) {
      exit_code = 1;
      break;
    }
    if (opt_.rounds > 0 && round_ >= opt_.rounds) {
      std::lock_guard<std::mutex> lock(mu_);
      exit_code = report::DriftExitCode(tracker_.Report());
      break;
    }
    Dispatch();
    bool pending;
    {
      std::lock_guard<std::mutex> lock(done_mu_);
      pending = !done_.empty();
    }
    if (!pending) deps_.pool->WaitForAny(TimeToNextWork());
  }
  // Probes in flight end by themselves (a stop also cancels the real sessions' waits); their
  // results are not judged. Then every session is closed.
  deps_.pool->Drain();
  {
    std::lock_guard<std::mutex> lock(done_mu_);
    done_.clear();
  }
  CloseSessions();
  control_ = nullptr;
  return exit_code;
}

void Watcher::CloseSessions() {
  for (auto& [name, s] : nodes_) s->shell.reset();
}

std::string Watcher::Metrics() {
  std::lock_guard<std::mutex> lock(mu_);
  report::DriftReport& r = tracker_.Report();
  if (loaded_ != nullptr) {
    r.cluster = loaded_->cluster.name;
    r.source = loaded_->cluster.source;
  }
  return RenderMetrics(r, stats_);
}

}  // namespace plumb::plans::watch
