// PostgresJournal: the Journal in a PostgreSQL database, shared by every machine that runs
// plumb against it (CI runners, operators' laptops): one lock, one history. The same tables,
// migrations and hash chain as the SQLite journal, in PostgreSQL's dialect.
//
// One connection guarded by a mutex (node threads write concurrently). Every write is one
// transaction that first takes a transaction-scoped advisory lock, so writers from all
// processes go one at a time as with SQLite's BEGIN IMMEDIATE: a chain entry can never be
// appended between another writer's read of the chain head and its own append, and the cluster
// lock is read and taken with nobody in between. A COMMIT that returned is durable
// (synchronous_commit, PostgreSQL's default): an intent is on disk before its step runs.
//
// A connection that breaks (the server restarted) is opened again for up to
// PLUMB_STORE_RETRY_S seconds (default 60) before the call fails. The window is the outage's,
// not each call's: the first call that finds the server gone starts it, the calls queued
// behind that one wait within the same window, and once it has passed every call fails at once
// ("journal.unreachable"), with one new connection attempt every few seconds, until the server
// answers again. So a run that has 1,000 writes left when the store goes away stops in about
// one window, not 1,000 of them. Only what can pass is retried (refused, reset, timed out, a
// server starting or shutting down, too many clients): a wrong password, a missing database or
// role, a bad option fail at once with libpq's message. Outages are told as they happen
// (SetStoreObserver). A write whose COMMIT was sent but not answered is not retried blindly:
// the call fails, and the engine stops before acting on it (an intent it cannot be sure of is
// an action it does not take).
#include <libpq-fe.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "plans/core/clock.h"
#include "plans/core/digest.h"
#include "plans/store/journal.h"
#include "plans/store/journal_chain.h"
#include "plans/store/journal_rows.h"
#include "plans/store/journal_schema.h"
#include "plans/store/store.h"

namespace plumb::plans {
namespace {


using journal_rows::kChainedTables;
using journal_rows::ParseDetail;

// Every writer takes this transaction-scoped advisory lock first ("plumb" in ASCII).
constexpr const char* kWriterLock = "SELECT pg_advisory_xact_lock(1886221666)";

#define kRunSelect PLUMB_JOURNAL_RUN_SELECT
#define kStepSelect PLUMB_JOURNAL_STEP_SELECT
#define kLockSelect PLUMB_JOURNAL_LOCK_SELECT

// int8 and int4's type OIDs (pg_type): the columns a chain image keeps as numbers.
constexpr Oid kInt8Oid = 20;
constexpr Oid kInt4Oid = 23;

// A query's result; clears itself.
class PgResult {
 public:
  explicit PgResult(PGresult* r = nullptr) : r_(r) {}
  ~PgResult() { PQclear(r_); }
  PgResult(PgResult&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  PgResult& operator=(PgResult&& o) noexcept {
    std::swap(r_, o.r_);
    return *this;
  }
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  int Rows() const { return r_ ? PQntuples(r_) : 0; }
  int Columns() const { return r_ ? PQnfields(r_) : 0; }
  std::string Text(int row, int col) const {
    return std::string(PQgetvalue(r_, row, col), PQgetlength(r_, row, col));
  }
  int64_t Int(int row, int col) const { return std::atoll(PQgetvalue(r_, row, col)); }
  const char* Name(int col) const { return PQfname(r_, col); }
  bool IsInt(int col) const { return PQftype(r_, col) == kInt8Oid || PQftype(r_, col) == kInt4Oid; }
  int64_t Changed() const { return std::atoll(PQcmdTuples(r_)); }
  const PGresult* raw() const { return r_; }

 private:
  PGresult* r_;
};

// One row of a result, as journal_rows' readers take it.
struct PgRow {
  const PgResult& r;
  int row;
  std::string Text(int col) const { return r.Text(row, col); }
  int64_t Int(int col) const { return r.Int(row, col); }
  bool IsInt(int col) const { return r.IsInt(col); }
  const char* Name(int col) const { return r.Name(col); }
  int Columns() const { return r.Columns(); }
};

// Parameters as text; numbers written out.
struct Params {
  std::vector<std::string> values;
  Params& Add(std::string v) {
    values.push_back(std::move(v));
    return *this;
  }
  Params& Add(int64_t v) { return Add(std::to_string(v)); }
};

class PostgresJournal final : public Journal {
 public:
  PostgresJournal(std::string conninfo, std::string shown, Clock& clock)
      : conninfo_(std::move(conninfo)), shown_(std::move(shown)), clock_(clock) {
    if (const char* s = std::getenv("PLUMB_STORE_RETRY_S"); s && *s) {
      char* end = nullptr;
      const long v = std::strtol(s, &end, 10);
      if (end != s && *end == '\0' && v >= 0 && v <= 86400) retry_s_ = static_cast<int>(v);
    }
  }
  ~PostgresJournal() override { PQfinish(conn_); }

  void SetStoreObserver(StoreObserver observer) override {
    std::lock_guard lock(mu_);
    observer_ = std::move(observer);
  }

  Status Init() {
    std::lock_guard lock(mu_);
    if (Status s = Connect(); !s) return s;
    // As a writer: two processes opening a new store at once must not both create its tables.
    return WriteTx([&]() -> Status {
      if (Status s = Exec("CREATE TABLE IF NOT EXISTS schema_migrations ("
                          "version BIGINT PRIMARY KEY, applied_at TEXT NOT NULL)");
          !s)
        return s;
      auto v = Query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", {});
      if (!v) return v.error();
      const int version = static_cast<int>(v->Int(0, 0));
      static const std::vector<std::string> kPgMigrations = JournalMigrations(SqlDialect::kPostgres);
      const int kLatest = static_cast<int>(kPgMigrations.size());
      if (version > kLatest)
        return Diagnostic::Error(
            "journal.version",
            fmt::format("journal schema version {} is newer than this plumb knows ({})", version, kLatest),
            {}, {}, "use a newer plumb, or another --store");
      for (int n = version; n < kLatest; ++n) {
        // (No rows to adopt into the chain at migration 3, as SQLite's journal has: a
        // PostgreSQL store is new with this plumb, so its migrations all run on empty tables.)
        if (Status s = Exec(kPgMigrations[n].c_str()); !s) return s;
        auto rec = Query("INSERT INTO schema_migrations(version, applied_at) VALUES ($1, "
                         "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'))",
                         Params().Add(int64_t{n + 1}));
        if (!rec) return rec.error();
      }
      return OkStatus();
    });
  }

  Status BeginRun(const RunRecord& r) override {
    std::lock_guard lock(mu_);
    return Chained("runs", [&]() -> Result<std::string> {
      auto q = Query("INSERT INTO runs(id, cluster, plan_digest, plan_json, commit_sha, repo, started_at, "
                     "ended_at, owner_host, owner_pid, outcome, summary, plan_commit, who) "
                     "VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)",
                     Params().Add(r.id).Add(r.cluster).Add(r.plan_digest).Add(r.plan_json).Add(r.commit)
                         .Add(r.repo).Add(r.started_at).Add(r.ended_at).Add(r.owner_host).Add(r.owner_pid)
                         .Add(std::string(Name(r.outcome))).Add(r.summary).Add(r.plan_commit)
                         .Add(r.who.ToJson().dump()));
      if (!q) return q.error();
      return r.id;
    });
  }

  Status EndRun(const std::string& run, RunState outcome, const std::string& ended_at,
                const std::string& summary) override {
    std::lock_guard lock(mu_);
    return Chained("runs", [&]() -> Result<std::string> {
      auto q = Query("UPDATE runs SET outcome=$1, ended_at=$2, summary=$3 WHERE id=$4",
                     Params().Add(std::string(Name(outcome))).Add(ended_at).Add(summary).Add(run));
      if (!q) return q.error();
      return run;
    });
  }

  Status ReopenRun(const std::string& run, const std::string& host, int64_t pid) override {
    std::lock_guard lock(mu_);
    return Chained("runs", [&]() -> Result<std::string> {
      auto q = Query("UPDATE runs SET outcome='running', ended_at='', owner_host=$1, owner_pid=$2 WHERE id=$3",
                     Params().Add(host).Add(pid).Add(run));
      if (!q) return q.error();
      return run;
    });
  }

  Result<std::optional<RunRecord>> GetRun(const std::string& run) override {
    std::lock_guard lock(mu_);
    auto q = Read(kRunSelect " WHERE id=$1", Params().Add(run));
    if (!q) return q.error();
    if (q->Rows() == 0) return std::optional<RunRecord>();
    return std::optional<RunRecord>(RunFrom(*q, 0));
  }

  Result<std::vector<RunRecord>> ListRuns(int limit) override {
    std::lock_guard lock(mu_);
    auto q = Read(kRunSelect " ORDER BY started_at DESC, id DESC LIMIT $1", Params().Add(int64_t{limit}));
    if (!q) return q.error();
    std::vector<RunRecord> out;
    for (int i = 0; i < q->Rows(); ++i) out.push_back(RunFrom(*q, i));
    return out;
  }

  Result<int64_t> StepIntent(const StepRecord& st) override {
    std::lock_guard lock(mu_);
    int64_t id = 0;
    Status done = Chained("steps", [&]() -> Result<std::string> {
      auto q = Query("INSERT INTO steps(run_id, node, step, detail, started_at) VALUES ($1,$2,$3,$4,$5) "
                     "RETURNING id",
                     Params().Add(st.run).Add(st.node).Add(st.step).Add(st.detail.dump()).Add(st.started_at));
      if (!q) return q.error();
      id = q->Int(0, 0);
      return std::to_string(id);
    });
    if (!done) return done.error();
    return id;
  }

  Status StepOutcome(int64_t id, StepState outcome, const std::string& error,
                     const std::string& ended_at, int64_t duration_ms,
                     const nlohmann::json& detail) override {
    std::lock_guard lock(mu_);
    return Chained("steps", [&]() -> Result<std::string> {
      nlohmann::json merged = nlohmann::json::object();
      auto cur = Query("SELECT detail FROM steps WHERE id=$1", Params().Add(id));
      if (!cur) return cur.error();
      if (cur->Rows() > 0) merged = ParseDetail(cur->Text(0, 0));
      if (detail.is_object() && merged.is_object()) merged.update(detail);
      auto q = Query("UPDATE steps SET outcome=$1, error=$2, ended_at=$3, duration_ms=$4, detail=$5 WHERE id=$6",
                     Params().Add(std::string(Name(outcome))).Add(error).Add(ended_at).Add(duration_ms)
                         .Add(merged.dump()).Add(id));
      if (!q) return q.error();
      return std::to_string(id);
    });
  }

  Result<std::vector<StepRecord>> Steps(const std::string& run, const std::string& node) override {
    std::lock_guard lock(mu_);
    auto q = node.empty() ? Read(kStepSelect " WHERE s.run_id=$1 ORDER BY s.id", Params().Add(run))
                          : Read(kStepSelect " WHERE s.run_id=$1 AND s.node=$2 ORDER BY s.id",
                                 Params().Add(run).Add(node));
    if (!q) return q.error();
    return StepsFrom(*q);
  }

  Result<std::vector<StepRecord>> History(const std::string& node, int limit) override {
    std::lock_guard lock(mu_);
    auto q = node.empty()
                 ? Read("SELECT * FROM (" kStepSelect " ORDER BY s.id DESC LIMIT $1) AS h ORDER BY 1",
                        Params().Add(int64_t{limit}))
                 : Read("SELECT * FROM (" kStepSelect " WHERE s.node=$1 ORDER BY s.id DESC LIMIT $2) AS h ORDER BY 1",
                        Params().Add(node).Add(int64_t{limit}));
    if (!q) return q.error();
    return StepsFrom(*q);
  }

  Status PutNode(const NodeRecord& n) override {
    std::lock_guard lock(mu_);
    return Chained("nodes", [&]() -> Result<std::string> {
      auto q = Query(
          "INSERT INTO nodes(run_id, node, status, last_step, admin_drained, admin_reason, error, "
          "started_at, ended_at, note) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) ON CONFLICT(run_id, node) "
          "DO UPDATE SET status=excluded.status, last_step=excluded.last_step, "
          "admin_drained=excluded.admin_drained, admin_reason=excluded.admin_reason, "
          "error=excluded.error, started_at=excluded.started_at, ended_at=excluded.ended_at, "
          "note=excluded.note",
          Params().Add(n.run).Add(n.node).Add(std::string(Name(n.status))).Add(n.last_step)
              .Add(int64_t{n.admin_drained ? 1 : 0}).Add(n.admin_reason).Add(n.error)
              .Add(n.started_at).Add(n.ended_at).Add(n.note));
      if (!q) return q.error();
      return n.run + "/" + n.node;
    });
  }

  Result<std::vector<NodeRecord>> Nodes(const std::string& run) override {
    std::lock_guard lock(mu_);
    auto q = Read(PLUMB_JOURNAL_NODE_SELECT " WHERE run_id=$1 ORDER BY node", Params().Add(run));
    if (!q) return q.error();
    std::vector<NodeRecord> out;
    for (int i = 0; i < q->Rows(); ++i) out.push_back(journal_rows::NodeFrom(PgRow{*q, i}));
    return out;
  }

  Status SaveFacts(const std::string& run, const std::string& node, const std::string& phase,
                   const std::string& digest, const nlohmann::json& facts,
                   const std::string& taken_at) override {
    std::lock_guard lock(mu_);
    return Chained("facts", [&]() -> Result<std::string> {
      auto q = Query("INSERT INTO facts(run_id, node, phase, digest, facts, taken_at) "
                     "VALUES ($1,$2,$3,$4,$5,$6) RETURNING id",
                     Params().Add(run).Add(node).Add(phase).Add(digest)
                         .Add(facts.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
                         .Add(taken_at));
      if (!q) return q.error();
      return std::to_string(q->Int(0, 0));
    });
  }

  Result<bool> AcquireLock(const LockInfo& want, const std::string& now, LockInfo* held_by) override {
    std::lock_guard lock(mu_);
    bool taken = false;
    Status st = WriteTx([&]() -> Status {
      auto cur = Query(kLockSelect " WHERE cluster=$1", Params().Add(want.cluster));
      if (!cur) return cur.error();
      if (cur->Rows() > 0) {
        LockInfo c = LockFrom(*cur, 0);
        if (journal_rows::LockKeepsOut(c, want, now)) {
          if (held_by) *held_by = c;
          taken = false;
          return OkStatus();
        }
      }
      auto q = Query("INSERT INTO locks(cluster, run_id, owner_host, owner_pid, since, expires, owner_start) "
                     "VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT(cluster) DO UPDATE SET "
                     "run_id=excluded.run_id, owner_host=excluded.owner_host, owner_pid=excluded.owner_pid, "
                     "since=excluded.since, expires=excluded.expires, owner_start=excluded.owner_start",
                     Params().Add(want.cluster).Add(want.run).Add(want.owner_host).Add(want.owner_pid)
                         .Add(want.since).Add(want.expires).Add(want.owner_start));
      if (!q) return q.error();
      taken = true;
      return OkStatus();
    });
    if (!st) return st.error();
    return taken;
  }

  Status RenewLock(const LockInfo& mine, const std::string& expires) override {
    std::lock_guard lock(mu_);
    int64_t changed = 0;
    Status st = WriteTx([&]() -> Status {
      auto q = Query("UPDATE locks SET expires=$1 WHERE cluster=$2 AND run_id=$3 AND owner_host=$4 "
                     "AND owner_pid=$5 AND owner_start=$6",
                     Params().Add(expires).Add(mine.cluster).Add(mine.run).Add(mine.owner_host)
                         .Add(mine.owner_pid).Add(mine.owner_start));
      if (!q) return q.error();
      changed = q->Changed();
      return OkStatus();
    });
    if (!st) return st;
    if (changed == 0) return journal_rows::LockLost(mine);
    return OkStatus();
  }

  Status ReleaseLock(const LockInfo& mine) override {
    std::lock_guard lock(mu_);
    return WriteTx([&]() -> Status {
      auto q = Query("DELETE FROM locks WHERE cluster=$1 AND run_id=$2 AND owner_host=$3 AND "
                     "owner_pid=$4 AND owner_start=$5",
                     Params().Add(mine.cluster).Add(mine.run).Add(mine.owner_host)
                         .Add(mine.owner_pid).Add(mine.owner_start));
      return q ? OkStatus() : Status(q.error());
    });
  }

  Status ForceUnlock(const std::string& run) override {
    std::lock_guard lock(mu_);
    int64_t changed = 0;
    Status st = WriteTx([&]() -> Status {
      auto q = Query("DELETE FROM locks WHERE run_id=$1", Params().Add(run));
      if (!q) return q.error();
      changed = q->Changed();
      return OkStatus();
    });
    if (!st) return st;
    if (changed == 0) return Diagnostic::Error("journal.no-lock", fmt::format("run {} holds no lock", run));
    return OkStatus();
  }

  Result<std::optional<LockInfo>> GetLock(const std::string& cluster) override {
    std::lock_guard lock(mu_);
    auto q = Read(kLockSelect " WHERE cluster=$1", Params().Add(cluster));
    if (!q) return q.error();
    if (q->Rows() == 0) return std::optional<LockInfo>();
    return std::optional<LockInfo>(LockFrom(*q, 0));
  }

  Result<std::optional<LockInfo>> LockOfRun(const std::string& run) override {
    std::lock_guard lock(mu_);
    auto q = Read(kLockSelect " WHERE run_id=$1", Params().Add(run));
    if (!q) return q.error();
    if (q->Rows() == 0) return std::optional<LockInfo>();
    return std::optional<LockInfo>(LockFrom(*q, 0));
  }

  Result<std::chrono::system_clock::time_point> StoreNow() override {
    std::lock_guard lock(mu_);
    auto q = Read("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint", Params());
    if (!q) return q.error();
    return std::chrono::system_clock::time_point(std::chrono::milliseconds(q->Int(0, 0)));
  }

  Result<bool> KnowsNode(const std::string& node) override {
    std::lock_guard lock(mu_);
    auto q = Read("SELECT 1 FROM steps WHERE node=$1 UNION ALL SELECT 1 FROM nodes WHERE node=$1 LIMIT 1",
                  Params().Add(node));
    if (!q) return q.error();
    return q->Rows() > 0;
  }

  Result<ChainReport> VerifyChain(const std::string& anchor) override {
    std::lock_guard lock(mu_);
    Result<ChainReport> report = Diagnostic::Error("journal.chain", "not verified");
    // One snapshot: the chain and the tables as of one moment.
    Status st = Tx([&]() -> Status {
      if (Status s = Exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"); !s) return s;
      report = VerifyLocked(anchor);
      return OkStatus();
    });
    if (!st) return st.error();
    return report;
  }

 private:
  using Entry = chain::Entry;

  // ---- the connection ---------------------------------------------------------------------
  Diagnostic PgError(const std::string& what, const PGresult* r = nullptr) const {
    std::string why = ScrubSecrets(r != nullptr ? PQresultErrorMessage(r) : (conn_ ? PQerrorMessage(conn_) : "no connection"),
                                   conninfo_);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return Diagnostic::Error("journal.postgresql", fmt::format("journal ({}): {}: {}", shown_, what, why), {}, {},
                             "is the PostgreSQL server up and the --store URL right? "
                             "(PLUMB_STORE_RETRY_S: how long a lost connection is retried)");
  }

  bool Up() const { return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK; }

  // Past the window, a call that finds the store still down tries once more at most this often
  // (it fails at once otherwise): the store's return is noticed, and 1,000 calls cost nothing.
  static constexpr std::chrono::seconds kProbeEvery{5};

  // libpq's reason for the connection's state, secrets hidden, on one line.
  std::string Why() const {
    std::string why = ScrubSecrets(conn_ ? PQerrorMessage(conn_) : "no connection", conninfo_);
    for (char& c : why)
      if (c == '\n' || c == '\t') c = ' ';
    while (!why.empty() && why.back() == ' ') why.pop_back();
    return why.empty() ? "libpq gave no reason" : why;
  }

  // One connection attempt, from scratch (PQreset would forget why the last one failed).
  Status TryConnect() {
    PQfinish(conn_);
    conn_ = PQconnectdb(conninfo_.c_str());
    if (Up()) {
      // Quiet: NOTICEs ("relation already exists, skipping") are not the user's business.
      PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
      // Whatever the database or role says: a COMMIT returns once it is on disk (an intent
      // before its step acts), and no wait (a writer behind a half-open peer's advisory
      // lock, a statement) outlasts what an operator would wait for.
      PgResult set(PQexec(conn_, "SET synchronous_commit = on; SET lock_timeout = '60s'; "
                                 "SET statement_timeout = '300s'"));
      if (set.raw() != nullptr && PQresultStatus(set.raw()) == PGRES_COMMAND_OK) return OkStatus();
      if (Up()) return PgError("setting the session up", set.raw());
    }
    const std::string why = Why();
    return Diagnostic::Error(StoreErrorIsTransient(why) ? "journal.unreachable" : "journal.postgresql",
                             fmt::format("journal ({}): cannot connect: {}", shown_, why), {}, {},
                             "check the --store URL (or PLUMB_STORE): host, port, database, user; "
                             "a password goes in PLUMB_STORE or libpq's password file "
                             "(~/.pgpass, PGPASSFILE), never on the command line");
  }

  void Tell(StoreEvent::Kind kind) {
    if (!observer_) return;
    StoreEvent e;
    e.kind = kind;
    e.store = shown_;
    e.why = down_why_;
    e.window = std::chrono::seconds(retry_s_);
    if (down_since_)
      e.down_for = std::chrono::duration_cast<std::chrono::seconds>(clock_.Now() - *down_since_);
    observer_(e);
  }

  // The call that finds the store down past its window: at once, saying since when.
  Diagnostic Unreachable() const {
    const long long down_s =
        down_since_ ? std::chrono::duration_cast<std::chrono::seconds>(clock_.Now() - *down_since_).count() : 0;
    return Diagnostic::Error(
        "journal.unreachable",
        fmt::format("journal ({}): the store has not answered since {} ({}s; a lost connection is waited for "
                    "{}s): {}",
                    shown_, down_since_wall_, down_s, retry_s_, down_why_),
        {}, {},
        "the PostgreSQL server is down or cannot be reached; once it answers, plumb apply --resume "
        "continues a run that stopped (PLUMB_STORE_RETRY_S: how long a lost connection is waited for)");
  }

  // (Re)opens the connection. A failure that can pass (refused, reset, timed out...) starts or
  // continues an outage: waited out up to retry_s_ from its start, then failed at once (see
  // the top of this file). Any other failure is returned at once.
  Status Connect() {
    if (gave_up_ && clock_.Now() - last_try_ < kProbeEvery) return Unreachable();
    for (int attempt = 0;; ++attempt) {
      Status s = TryConnect();
      last_try_ = clock_.Now();
      if (s) {
        if (down_since_) Tell(StoreEvent::Kind::kBack);
        down_since_.reset();
        gave_up_ = false;
        return s;
      }
      if (s.error().code != "journal.unreachable") return s;
      down_why_ = Why();
      if (!down_since_) {
        down_since_ = last_try_;
        down_since_wall_ = Rfc3339(std::chrono::system_clock::now());
        Tell(StoreEvent::Kind::kUnreachable);
      }
      if (gave_up_) return Unreachable();
      const auto until = *down_since_ + std::chrono::seconds(retry_s_);
      if (last_try_ >= until) {
        gave_up_ = true;
        Tell(StoreEvent::Kind::kGaveUp);
        return Unreachable();
      }
      const auto pause = std::min<Clock::TimePoint::duration>(
          std::chrono::milliseconds(std::min(200 * (attempt + 1), 2000)), until - last_try_);
      clock_.Sleep(std::chrono::ceil<std::chrono::milliseconds>(pause));
    }
  }

  // A statement inside the current transaction (no retry: the transaction decides).
  Result<PgResult> Query(const char* sql, const Params& p) {
    std::vector<const char*> values;
    for (const std::string& v : p.values) values.push_back(v.c_str());
    PgResult r(PQexecParams(conn_, sql, static_cast<int>(values.size()), nullptr, values.data(),
                            nullptr, nullptr, 0));
    // (the PGresult* is owned by r; PQresultStatus on a null result is PGRES_FATAL_ERROR)
    return CheckResult(std::move(r), sql);
  }
  Result<PgResult> Query(const std::string& sql, const Params& p) { return Query(sql.c_str(), p); }

  Result<PgResult> CheckResult(PgResult r, const std::string& sql) {
    const PGresult* raw = r.raw();
    ExecStatusType s = raw ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
    if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) return r;
    // The statement's start, on one line: which of them failed.
    std::string what;
    for (char c : sql.substr(0, 60)) {
      const bool blank = c == '\n' || c == ' ';
      if (!(blank && (what.empty() || what.back() == ' '))) what += blank ? ' ' : c;
    }
    return PgError("'" + what + (sql.size() > 60 ? "...'" : "'"), raw);
  }

  // Statements without parameters (a migration is several at once, which only PQexec takes).
  Status Exec(const char* sql) {
    auto r = CheckResult(PgResult(PQexec(conn_, sql)), sql);
    return r ? OkStatus() : Status(r.error());
  }

  // `body` in one transaction. A connection lost before COMMIT was sent is opened again and
  // the whole transaction retried (nothing of it was committed); one lost during COMMIT is
  // not (it may have been), and the call fails.
  Status Tx(const std::function<Status()>& body) {
    for (int tries = 0;; ++tries) {
      if (!Up())
        if (Status c = Connect(); !c) return c;
      Status s = Exec("BEGIN");
      if (s) s = body();
      if (s) {
        // A COMMIT that could not even be sent was never seen by the server: nothing of the
        // transaction landed, and it is retried whole like any lost transaction.
        if (PQsendQuery(conn_, "COMMIT") == 1) {
          PgResult c(PQgetResult(conn_));
          while (PGresult* more = PQgetResult(conn_)) PQclear(more);
          const PGresult* raw = c.raw();
          // An aborted transaction answers COMMIT with "ROLLBACK": not a commit.
          if (raw && PQresultStatus(raw) == PGRES_COMMAND_OK && std::string(PQcmdStatus(const_cast<PGresult*>(raw))) == "COMMIT")
            return OkStatus();
          Diagnostic d = PgError("COMMIT", raw);
          if (Lost(d.message))
            return PgError("the connection broke during COMMIT; whether the write landed is not "
                           "known, so it is not repeated");
          return d;
        }
        Diagnostic d = PgError("COMMIT could not be sent");
        if (!Lost(d.message)) return d;
        if (tries >= 1) return PgError("the connection broke twice in a row");
        continue;
      }
      if (!Lost(s.error().message)) {
        PQclear(PQexec(conn_, "ROLLBACK"));
        return s;
      }
      if (tries >= 1) return s;   // broke twice in a row: report it
    }
  }

  // Whether the connection is gone, whatever PQstatus says yet: libpq reports a server that
  // went away ("server closed the connection unexpectedly", a send that failed) before it
  // marks the connection bad, if it does. A lost one is dropped, so the next try opens anew.
  bool Lost(const std::string& why) {
    if (!Up()) return true;
    if (!StoreErrorIsTransient(why)) return false;
    PQfinish(conn_);
    conn_ = nullptr;
    return true;
  }
  Status WriteTx(const std::function<Status()>& body) {
    return Tx([&]() -> Status {
      if (Status s = Exec(kWriterLock); !s) return s;
      return body();
    });
  }
  // One query in a transaction of its own (retried whole when the connection was lost).
  Result<PgResult> Read(const char* sql, const Params& p) {
    Result<PgResult> out = Diagnostic::Error("journal.postgresql", "not read");
    Status st = Tx([&]() -> Status {
      out = Query(sql, p);
      return out ? OkStatus() : Status(out.error());
    });
    if (!st) return st.error();
    return out;
  }

  // ---- the hash chain (as SqliteJournal's) --------------------------------------------------
  Result<std::optional<nlohmann::json>> RowImage(const std::string& tbl, const std::string& key) {
    Result<PgResult> q = Diagnostic::Error("journal.chain", "no chained table " + tbl);
    if (tbl == "runs") {
      q = Query("SELECT * FROM runs WHERE id=$1", Params().Add(key));
    } else if (tbl == "steps" || tbl == "facts") {
      q = Query("SELECT * FROM " + tbl + " WHERE id=$1", Params().Add(static_cast<int64_t>(std::atoll(key.c_str()))));
    } else if (tbl == "nodes") {
      auto slash = key.find('/');
      q = Query("SELECT * FROM nodes WHERE run_id=$1 AND node=$2",
                Params().Add(key.substr(0, slash)).Add(slash == std::string::npos ? "" : key.substr(slash + 1)));
    }
    if (!q) return q.error();
    if (q->Rows() == 0) return std::optional<nlohmann::json>();
    return std::optional<nlohmann::json>(journal_rows::ImageFrom(tbl, PgRow{*q, 0}));
  }

  static Entry EntryFrom(const PgResult& q, int i) {
    return {q.Int(i, 0), q.Text(i, 1), q.Text(i, 2), q.Text(i, 3), q.Text(i, 4), q.Text(i, 5), q.Text(i, 6)};
  }

  Result<std::optional<Entry>> LastEntry(const std::string& tbl = {}, const std::string& key = {}) {
    auto q = tbl.empty()
                 ? Query("SELECT seq, tbl, row_key, how, image, prev_hash, hash FROM chain ORDER BY seq DESC LIMIT 1",
                         Params())
                 : Query("SELECT seq, tbl, row_key, how, image, prev_hash, hash FROM chain "
                         "WHERE tbl=$1 AND row_key=$2 ORDER BY seq DESC LIMIT 1",
                         Params().Add(tbl).Add(key));
    if (!q) return q.error();
    if (q->Rows() == 0) return std::optional<Entry>();
    return std::optional<Entry>(EntryFrom(*q, 0));
  }

  Status Append(const std::string& tbl, const std::string& key, const std::string& how, bool skip_same) {
    auto image = RowImage(tbl, key);
    if (!image) return image.error();
    if (!image->has_value()) return PgError("chaining a row that is not there");
    std::string canonical = CanonicalJson(**image);
    if (skip_same) {
      auto mine = LastEntry(tbl, key);
      if (!mine) return mine.error();
      if (mine->has_value() && (*mine)->image == canonical) return OkStatus();
    }
    auto last = LastEntry();
    if (!last) return last.error();
    const Entry e = chain::NextEntry(last->has_value() ? &**last : nullptr, tbl, key, how, std::move(canonical));
    auto ins = Query("INSERT INTO chain(seq, tbl, row_key, how, image, prev_hash, hash) VALUES ($1,$2,$3,$4,$5,$6,$7)",
                     Params().Add(e.seq).Add(e.tbl).Add(e.key).Add(e.how).Add(e.image).Add(e.prev).Add(e.hash));
    return ins ? OkStatus() : Status(ins.error());
  }

  // One write and its chain entry, in one writer transaction.
  Status Chained(const std::string& tbl, const std::function<Result<std::string>()>& write) {
    return WriteTx([&]() -> Status {
      auto key = write();
      if (!key) return key.error();
      return Append(tbl, *key, "write", tbl == "nodes");
    });
  }

  Result<ChainReport> VerifyLocked(const std::string& anchor) {
    std::vector<Entry> entries;
    auto q = Query("SELECT seq, tbl, row_key, how, image, prev_hash, hash FROM chain ORDER BY seq", Params());
    if (!q) return q.error();
    for (int i = 0; i < q->Rows(); ++i) entries.push_back(EntryFrom(*q, i));
    std::vector<chain::Row> rows;
    for (const char* tbl : kChainedTables) {
      const std::string t = tbl;
      auto r = Query("SELECT * FROM " + t + journal_rows::ChainOrderOf(t), Params());
      if (!r) return r.error();
      for (int i = 0; i < r->Rows(); ++i) {
        nlohmann::json now = journal_rows::ImageFrom(t, PgRow{*r, i});
        std::string key = journal_rows::ChainKeyOf(t, now);
        rows.push_back({t, std::move(key), std::move(now)});
      }
    }
    return chain::Verify(entries, rows, anchor);
  }

  // ---- rows -------------------------------------------------------------------------------
  static RunRecord RunFrom(const PgResult& s, int i) { return journal_rows::RunFrom(PgRow{s, i}); }
  static LockInfo LockFrom(const PgResult& s, int i) { return journal_rows::LockFrom(PgRow{s, i}); }
  static std::vector<StepRecord> StepsFrom(const PgResult& s) {
    std::vector<StepRecord> out;
    for (int i = 0; i < s.Rows(); ++i) out.push_back(journal_rows::StepFrom(PgRow{s, i}));
    return out;
  }

  std::string conninfo_;
  std::string shown_;   ///< the store as messages show it: never its password
  Clock& clock_;        ///< the retry window's time and its pauses (monotonic unless a test's)
  int retry_s_ = 60;
  PGconn* conn_ = nullptr;
  std::mutex mu_;
  StoreObserver observer_;
  // The outage under way, if any: since when (steady, and as a time for messages), libpq's
  // last reason, the last attempt, and whether its window has passed.
  std::optional<Clock::TimePoint> down_since_;
  std::string down_since_wall_;
  std::string down_why_;
  Clock::TimePoint last_try_{};
  bool gave_up_ = false;
};

}  // namespace

namespace {

// The retry window measured on the monotonic clock: a wall clock stepped back (NTP, a VM
// resumed) must neither keep a gone server from being tried again nor end a window early. Its
// Now() is only ever subtracted from itself here, never shown.
class SteadyClock final : public Clock {
 public:
  TimePoint Now() override {
    return TimePoint(std::chrono::duration_cast<TimePoint::duration>(
        std::chrono::steady_clock::now().time_since_epoch()));
  }
  void Sleep(std::chrono::milliseconds d) override { std::this_thread::sleep_for(d); }
};

}  // namespace

Result<std::unique_ptr<Journal>> OpenPostgresJournal(const std::string& url, Clock* clock) {
  static SteadyClock steady;
  auto checked = CheckedPostgresUrl(url);
  if (!checked) return checked.error();
  std::string conninfo = *checked;
  // Bounded waits on the network: a connect, and a peer gone silent (keepalives, and the
  // kernel's give-up on unacknowledged data).
  for (const char* param : {"connect_timeout=10", "keepalives=1", "keepalives_idle=30", "tcp_user_timeout=60000"}) {
    const std::string key = std::string(param).substr(0, std::string(param).find('=') + 1);
    if (conninfo.find(key) == std::string::npos)
      conninfo += std::string(conninfo.find('?') == std::string::npos ? "?" : "&") + param;
  }
  auto j = std::make_unique<PostgresJournal>(conninfo, RedactStore(url), clock ? *clock : steady);
  if (Status s = j->Init(); !s) return s.error();
  return std::unique_ptr<Journal>(std::move(j));
}

}  // namespace plumb::plans
