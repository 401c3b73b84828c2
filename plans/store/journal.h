#pragma once
/// The journal: the durable record of every apply. Each step of each node is written BEFORE it
/// runs (intent) and again after (outcome), so a crash, a Ctrl-C or a lost CI runner never loses
/// track of a node: `plumb apply --resume` reads it back. The same store keeps each run's plan,
/// commit, facts snapshots, and the cluster lock (one apply per cluster).
///
/// `Journal` is an interface so a shared backend (PostgreSQL) can be added without touching the
/// engine; SqliteJournal is the default (schemas/journal.md documents its tables).
///
/// Tamper evidence (schema 3): every write to runs, steps, nodes and facts also appends the
/// row as written to a hash chain, each entry holding the previous entry's hash. VerifyChain
/// replays it and compares the tables with it, so an edited, deleted, inserted or reordered
/// row is named. The chain cannot stop someone who rewrites it whole from the edit on; the
/// head hash kept elsewhere (an audit export, a CI log) is what exposes that.
/// Implementations must be safe to call from several threads at once (one per node in a batch).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plans/store/run_state.h"
#include "plans/store/run_who.h"
#include "schemas/result.h"

namespace plumb::plans {

/// One apply run.
struct RunRecord {
  std::string id;            ///< "20261129-232600-4f2a": sortable, no ':' (it goes in drain reasons)
  std::string cluster;
  std::string plan_digest;
  std::string plan_json;     ///< the whole plan file, so --resume needs nothing else
  std::string commit;        ///< the commit applied (what the node markers record)
  /// The commit the plan was made at, when apply accepted it at another (a merge); else "".
  std::string plan_commit;
  std::string repo;
  RunWho who;                ///< operator, CI actor, approver, commit author/committer/signer
  std::string started_at;    ///< RFC 3339 UTC with milliseconds
  std::string ended_at;      ///< "" while running
  std::string owner_host;
  int64_t owner_pid = 0;
  RunState outcome = RunState::kRunning;
  std::string summary;       ///< one line for `plumb runs`
};

/// One step of one node: written as an intent (outcome empty), completed with an outcome.
struct StepRecord {
  int64_t id = 0;
  std::string run;
  std::string node;
  std::string step;          ///< "probe", "claim", "drain", "wait-drained", "apply:<action id>", "reboot",
                             ///< "wait-boot", "verify", "health:<n>", "marker", "resume"
  nlohmann::json detail = nlohmann::json::object();   ///< step inputs (e.g. the old boot id)
  std::string started_at;
  std::string ended_at;      ///< "" while the intent has no outcome
  int64_t duration_ms = 0;
  StepState outcome = StepState::kNone;   ///< kNone: no outcome yet
  std::string error;
  std::string commit;        ///< filled by history queries (the run's commit)
};

/// Where one node stands in one run.
struct NodeRecord {
  std::string run;
  std::string node;
  NodeState status = NodeState::kRunning;
  std::string last_step;
  bool admin_drained = false;    ///< drained by someone else before plumb touched it
  std::string admin_reason;
  std::string error;
  std::string started_at;
  std::string ended_at;
  /// While running: what it waits for ("waiting for 1 job(s): 1234 (alice: train, 58m left)").
  std::string note;
};

/// What VerifyChain found.
struct ChainReport {
  int64_t entries = 0;
  std::string head;                    ///< the last entry's hash ("" when the chain is empty)
  /// One line per problem, naming the entry or the row: "steps row 17 (run R, node n1, step
  /// verify) was edited after it was written: outcome 'failed' in the chain, 'ok' now".
  std::vector<std::string> problems;
  /// Rows written before the journal had a chain that it took in as they were (migration 3).
  int64_t adopted = 0;
  bool ok() const { return problems.empty(); }
};

/// Who holds the cluster lock.
struct LockInfo {
  std::string cluster;
  std::string run;
  std::string owner_host;
  int64_t owner_pid = 0;
  std::string since;
  std::string expires;
  /// When the owner process started ("<boot id>/<start ticks>" on Linux), so a pid the kernel
  /// reused for another program is not taken for the owner. "" when unknown.
  std::string owner_start;
};

/// What a shared store says about its connection, as it happens (PostgresJournal; a journal on
/// this machine says nothing). Said once per outage: when it begins, when the retry window ends
/// without an answer, and when the server answers again.
struct StoreEvent {
  enum class Kind {
    kUnreachable,   ///< the server stopped answering; calls wait up to `window` for it
    kGaveUp,        ///< `window` passed: calls fail at once (one attempt every few seconds)
    kBack,          ///< it answers again, after `down_for`
  };
  Kind kind = Kind::kUnreachable;
  std::string store;                 ///< as messages show it (no password)
  std::string why;                   ///< libpq's last reason, secrets hidden
  std::chrono::seconds window{0};    ///< how long a lost connection is waited for
  std::chrono::seconds down_for{0};
};
/// Called with the journal's own lock held: it must not call the journal.
using StoreObserver = std::function<void(const StoreEvent&)>;

class Journal {
 public:
  virtual ~Journal() = default;

  /// Where a shared store's outages are told (see StoreEvent); none by default.
  virtual void SetStoreObserver(StoreObserver observer) { (void)observer; }

  /// Records a new run (outcome running).
  virtual Status BeginRun(const RunRecord& run) = 0;
  /// Sets a run's outcome, end time and summary line.
  virtual Status EndRun(const std::string& run, RunState outcome,
                        const std::string& ended_at, const std::string& summary) = 0;
  /// Marks a run running again (on --resume), with the new owner.
  virtual Status ReopenRun(const std::string& run, const std::string& owner_host,
                           int64_t owner_pid) = 0;
  /// The run, or std::nullopt when the journal has no such run.
  virtual Result<std::optional<RunRecord>> GetRun(const std::string& run) = 0;
  /// Most recent first.
  virtual Result<std::vector<RunRecord>> ListRuns(int limit) = 0;

  /// Writes a step's intent, durably, before the step runs; returns its id.
  virtual Result<int64_t> StepIntent(const StepRecord& step) = 0;
  /// Completes a step: outcome, error, timing, and `detail` merged over the intent's.
  virtual Status StepOutcome(int64_t step_id, StepState outcome, const std::string& error,
                             const std::string& ended_at, int64_t duration_ms,
                             const nlohmann::json& detail) = 0;
  /// Steps of a run (of one node if `node` is set), in the order they were written.
  virtual Result<std::vector<StepRecord>> Steps(const std::string& run,
                                                const std::string& node = {}) = 0;
  /// Every step ever journaled for `node` (all nodes if empty), oldest first, with the commit.
  virtual Result<std::vector<StepRecord>> History(const std::string& node, int limit) = 0;

  virtual Status PutNode(const NodeRecord& node) = 0;
  virtual Result<std::vector<NodeRecord>> Nodes(const std::string& run) = 0;

  /// Keeps a facts snapshot ("before" at the stale check, "after" at verify).
  virtual Status SaveFacts(const std::string& run, const std::string& node,
                           const std::string& phase, const std::string& digest,
                           const nlohmann::json& facts, const std::string& taken_at) = 0;

  /// Takes the cluster lock for `want.run` unless someone else holds an unexpired one (then
  /// returns the holder in `held_by` and false). `now` decides expiry (RFC 3339 compare).
  virtual Result<bool> AcquireLock(const LockInfo& want, const std::string& now,
                                   LockInfo* held_by) = 0;
  /// Pushes the expiry of the lock `mine` took; error (journal.lock-lost) if that process no
  /// longer holds it. The owner is the whole of cluster, run, host, pid and process start: a
  /// run taken over by another process after expiry (--resume elsewhere) is that process's,
  /// and the old one, were it still alive, finds out at its next renewal.
  virtual Status RenewLock(const LockInfo& mine, const std::string& expires) = 0;
  /// Releases the lock if `mine`'s process holds it (no-op otherwise: never another's).
  virtual Status ReleaseLock(const LockInfo& mine) = 0;
  /// Drops whatever lock `run` holds, on any cluster; error if it holds none.
  virtual Status ForceUnlock(const std::string& run) = 0;
  virtual Result<std::optional<LockInfo>> GetLock(const std::string& cluster) = 0;
  /// The lock `run` holds, on whichever cluster; nullopt when it holds none.
  virtual Result<std::optional<LockInfo>> LockOfRun(const std::string& run) = 0;

  /// Replays the hash chain and compares every row with its last chained image. `anchor`: a
  /// head hash recorded earlier (an audit export's); it must be an entry of the chain, else the
  /// chain was rewritten since. A journal without a chain answers "journal.no-chain".
  virtual Result<ChainReport> VerifyChain(const std::string& anchor = {}) {
    return Diagnostic::Error("journal.no-chain", "this journal keeps no hash chain");
  }
  /// The time by the store's clock, which the cluster lock's since and expiry are written in:
  /// a store shared by several machines (PostgreSQL) answers with its server's clock, so that
  /// runners whose clocks disagree do not stretch, cut short or take each other's lease. A
  /// journal on this machine answers with this machine's.
  virtual Result<std::chrono::system_clock::time_point> StoreNow() {
    return std::chrono::system_clock::now();
  }
  /// Is `node` named by any run of this journal (a step, or a node row)?
  virtual Result<bool> KnowsNode(const std::string& node) {
    auto h = History(node, 1);
    if (!h) return h.error();
    return !h->empty();
  }
};

/// Opens (creating and migrating as needed) the SQLite journal at `path`. WAL mode,
/// synchronous=FULL: a step's intent is on disk before the step runs.
Result<std::unique_ptr<Journal>> OpenSqliteJournal(const std::string& path);

/// The default journal path: $PLUMB_JOURNAL, else $XDG_STATE_HOME/plumb/journal.db, else
/// ~/.local/state/plumb/journal.db.
std::string DefaultJournalPath();

/// The schema version SqliteJournal migrates to.
inline constexpr int kJournalSchemaVersion = 3;

}  // namespace plumb::plans
