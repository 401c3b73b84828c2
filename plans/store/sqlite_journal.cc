// SqliteJournal: the default Journal. One connection guarded by a mutex (node threads write
// concurrently); WAL + synchronous=FULL so an intent is durable before its step runs; a
// busy_timeout so two plumb processes sharing a journal wait for each other instead of failing.
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>

#include <fmt/format.h>

#include "plans/core/digest.h"
#include "plans/store/journal.h"
#include "plans/store/journal_chain.h"
#include "plans/store/journal_rows.h"
#include "plans/store/journal_schema.h"

namespace plumb::plans {
namespace {


#define kRunSelect PLUMB_JOURNAL_RUN_SELECT
#define kStepSelect PLUMB_JOURNAL_STEP_SELECT
#define kLockSelect PLUMB_JOURNAL_LOCK_SELECT
using journal_rows::kChainedTables;
using journal_rows::ParseDetail;

Diagnostic DbError(sqlite3* db, const std::string& what) {
  return Diagnostic::Error("journal.sqlite",
                           fmt::format("journal: {}: {}", what, db ? sqlite3_errmsg(db) : "?"));
}

// A prepared statement with positional binding; finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) s_ = nullptr;
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return s_ != nullptr; }
  Stmt& Bind(const std::string& v) {
    sqlite3_bind_text(s_, ++n_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int64_t v) {
    sqlite3_bind_int64(s_, ++n_, v);
    return *this;
  }
  /// SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(s_); }
  std::string Text(int col) const {
    auto p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
    return p ? std::string(p, sqlite3_column_bytes(s_, col)) : std::string();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(s_, col); }
  int Columns() const { return sqlite3_column_count(s_); }
  const char* Name(int col) const { return sqlite3_column_name(s_, col); }
  bool IsInt(int col) const { return sqlite3_column_type(s_, col) == SQLITE_INTEGER; }

 private:
  sqlite3_stmt* s_ = nullptr;
  int n_ = 0;
};

class SqliteJournal final : public Journal {
 public:
  explicit SqliteJournal(sqlite3* db) : db_(db) {}
  ~SqliteJournal() override { sqlite3_close(db_); }

  Status Init() {
    if (Status s = Exec("PRAGMA journal_mode=WAL"); !s) return s;
    if (Status s = Exec("PRAGMA synchronous=FULL"); !s) return s;
    if (Status s = Exec("PRAGMA foreign_keys=ON"); !s) return s;
    if (Status s = Exec("CREATE TABLE IF NOT EXISTS schema_migrations ("
                        "version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
        !s)
      return s;
    int version = 0;
    {
      Stmt q(db_, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
      if (!q.ok() || q.Step() != SQLITE_ROW) return DbError(db_, "reading schema version");
      version = static_cast<int>(q.Int(0));
    }
    static const std::vector<std::string> kMigrations = JournalMigrations(SqlDialect::kSqlite);
    const int kLatest = static_cast<int>(kMigrations.size());
    if (version > kLatest)
      return Diagnostic::Error(
          "journal.version",
          fmt::format("journal schema version {} is newer than this plumb knows ({})", version,
                      kLatest),
          {}, {}, "use a newer plumb, or another --journal");
    for (int v = version; v < kLatest; ++v) {
      if (Status s = Exec("BEGIN IMMEDIATE"); !s) return s;
      Status s = Exec(kMigrations[v].c_str());
      if (s && v + 1 == 3) s = AdoptRows();
      if (s) {
        Stmt ins(db_, "INSERT INTO schema_migrations(version, applied_at) "
                      "VALUES (?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))");
        ins.Bind(int64_t{v + 1});
        if (!ins.ok() || ins.Step() != SQLITE_DONE) s = DbError(db_, "recording migration");
      }
      if (!s) {
        (void)Exec("ROLLBACK");
        return s;
      }
      if (Status c = Exec("COMMIT"); !c) return c;
    }
    return OkStatus();
  }

  Status BeginRun(const RunRecord& r) override {
    std::lock_guard lock(mu_);
    return Chained("runs", [&]() -> Result<std::string> {
      Stmt s(db_,
             "INSERT INTO runs(id, cluster, plan_digest, plan_json, commit_sha, repo, started_at, "
             "ended_at, owner_host, owner_pid, outcome, summary, plan_commit, who) "
             "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
      s.Bind(r.id).Bind(r.cluster).Bind(r.plan_digest).Bind(r.plan_json).Bind(r.commit)
          .Bind(r.repo).Bind(r.started_at).Bind(r.ended_at).Bind(r.owner_host).Bind(r.owner_pid)
          .Bind(std::string(Name(r.outcome))).Bind(r.summary)
          .Bind(r.plan_commit).Bind(r.who.ToJson().dump());
      if (Status d = Done(s, "recording run " + r.id); !d) return d.error();
      return r.id;
    });
  }

  Status EndRun(const std::string& run, RunState outcome, const std::string& ended_at,
                const std::string& summary) override {
    std::lock_guard lock(mu_);
    return Chained("runs", [&]() -> Result<std::string> {
      Stmt s(db_, "UPDATE runs SET outcome=?, ended_at=?, summary=? WHERE id=?");
      s.Bind(std::string(Name(outcome))).Bind(ended_at).Bind(summary).Bind(run);
      if (Status d = Done(s, "ending run " + run); !d) return d.error();
      return run;
    });
  }

  Status ReopenRun(const std::string& run, const std::string& host, int64_t pid) override {
    std::lock_guard lock(mu_);
    return Chained("runs", [&]() -> Result<std::string> {
      Stmt s(db_,
             "UPDATE runs SET outcome='running', ended_at='', owner_host=?, owner_pid=? WHERE id=?");
      s.Bind(host).Bind(pid).Bind(run);
      if (Status d = Done(s, "reopening run " + run); !d) return d.error();
      return run;
    });
  }

  Result<std::optional<RunRecord>> GetRun(const std::string& run) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, kRunSelect " WHERE id=?");
    s.Bind(run);
    if (!s.ok()) return DbError(db_, "reading run");
    int rc = s.Step();
    if (rc == SQLITE_DONE) return std::optional<RunRecord>();
    if (rc != SQLITE_ROW) return DbError(db_, "reading run");
    return std::optional<RunRecord>(RunFrom(s));
  }

  Result<std::vector<RunRecord>> ListRuns(int limit) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, kRunSelect " ORDER BY started_at DESC, id DESC LIMIT ?");
    s.Bind(int64_t{limit});
    if (!s.ok()) return DbError(db_, "listing runs");
    std::vector<RunRecord> out;
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) out.push_back(RunFrom(s));
    if (rc != SQLITE_DONE) return DbError(db_, "listing runs");
    return out;
  }

  Result<int64_t> StepIntent(const StepRecord& st) override {
    std::lock_guard lock(mu_);
    int64_t id = 0;
    Status done = Chained("steps", [&]() -> Result<std::string> {
      Stmt s(db_, "INSERT INTO steps(run_id, node, step, detail, started_at) VALUES (?,?,?,?,?)");
      s.Bind(st.run).Bind(st.node).Bind(st.step).Bind(st.detail.dump()).Bind(st.started_at);
      if (Status d = Done(s, "recording intent " + st.step); !d) return d.error();
      id = static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
      return std::to_string(id);
    });
    if (!done) return done.error();
    return id;
  }

  Status StepOutcome(int64_t id, StepState outcome, const std::string& error,
                     const std::string& ended_at, int64_t duration_ms,
                     const nlohmann::json& detail) override {
    std::lock_guard lock(mu_);
    nlohmann::json merged = nlohmann::json::object();
    {
      Stmt q(db_, "SELECT detail FROM steps WHERE id=?");
      q.Bind(id);
      if (q.ok() && q.Step() == SQLITE_ROW) merged = ParseDetail(q.Text(0));
    }
    if (detail.is_object() && merged.is_object()) merged.update(detail);
    return Chained("steps", [&]() -> Result<std::string> {
      Stmt s(db_, "UPDATE steps SET outcome=?, error=?, ended_at=?, duration_ms=?, detail=? "
                  "WHERE id=?");
      s.Bind(std::string(Name(outcome))).Bind(error).Bind(ended_at).Bind(duration_ms).Bind(merged.dump()).Bind(id);
      if (Status d = Done(s, "recording outcome"); !d) return d.error();
      return std::to_string(id);
    });
  }

  Result<std::vector<StepRecord>> Steps(const std::string& run, const std::string& node) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, node.empty() ? kStepSelect " WHERE s.run_id=? ORDER BY s.id"
                             : kStepSelect " WHERE s.run_id=? AND s.node=? ORDER BY s.id");
    s.Bind(run);
    if (!node.empty()) s.Bind(node);
    return ReadSteps(s);
  }

  Result<std::vector<StepRecord>> History(const std::string& node, int limit) override {
    std::lock_guard lock(mu_);
    // The newest `limit` steps, returned oldest first.
    Stmt s(db_, node.empty()
                    ? "SELECT * FROM (" kStepSelect " ORDER BY s.id DESC LIMIT ?) ORDER BY 1"
                    : "SELECT * FROM (" kStepSelect
                      " WHERE s.node=? ORDER BY s.id DESC LIMIT ?) ORDER BY 1");
    if (!node.empty()) s.Bind(node);
    s.Bind(int64_t{limit});
    return ReadSteps(s);
  }

  Status PutNode(const NodeRecord& n) override {
    std::lock_guard lock(mu_);
    return Chained("nodes", [&]() -> Result<std::string> {
    Stmt s(db_,
           "INSERT INTO nodes(run_id, node, status, last_step, admin_drained, admin_reason, error, "
           "started_at, ended_at, note) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(run_id, node) "
           "DO UPDATE SET status=excluded.status, last_step=excluded.last_step, "
           "admin_drained=excluded.admin_drained, admin_reason=excluded.admin_reason, "
           "error=excluded.error, started_at=excluded.started_at, ended_at=excluded.ended_at, "
           "note=excluded.note");
    s.Bind(n.run).Bind(n.node).Bind(std::string(Name(n.status))).Bind(n.last_step)
        .Bind(int64_t{n.admin_drained ? 1 : 0}).Bind(n.admin_reason).Bind(n.error)
        .Bind(n.started_at).Bind(n.ended_at).Bind(n.note);
    if (Status d = Done(s, "recording node " + n.node); !d) return d.error();
    return n.run + "/" + n.node;
    });
  }

  Result<std::vector<NodeRecord>> Nodes(const std::string& run) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, PLUMB_JOURNAL_NODE_SELECT " WHERE run_id=? ORDER BY node");
    s.Bind(run);
    if (!s.ok()) return DbError(db_, "reading nodes");
    std::vector<NodeRecord> out;
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) out.push_back(journal_rows::NodeFrom(s));
    if (rc != SQLITE_DONE) return DbError(db_, "reading nodes");
    return out;
  }

  Status SaveFacts(const std::string& run, const std::string& node, const std::string& phase,
                   const std::string& digest, const nlohmann::json& facts,
                   const std::string& taken_at) override {
    std::lock_guard lock(mu_);
    return Chained("facts", [&]() -> Result<std::string> {
      Stmt s(db_, "INSERT INTO facts(run_id, node, phase, digest, facts, taken_at) "
                  "VALUES (?,?,?,?,?,?)");
      s.Bind(run).Bind(node).Bind(phase).Bind(digest)
          .Bind(facts.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
          .Bind(taken_at);
      if (Status d = Done(s, "saving facts of " + node); !d) return d.error();
      return std::to_string(sqlite3_last_insert_rowid(db_));
    });
  }

  Result<bool> AcquireLock(const LockInfo& want, const std::string& now,
                           LockInfo* held_by) override {
    std::lock_guard lock(mu_);
    // One transaction: read the holder, then take or refuse, with no other writer in between.
    if (Status s = Exec("BEGIN IMMEDIATE"); !s) return s.error();
    auto finish = [&](bool commit) { (void)Exec(commit ? "COMMIT" : "ROLLBACK"); };
    std::optional<LockInfo> cur;
    {
      Stmt q(db_, kLockSelect " WHERE cluster=?");
      q.Bind(want.cluster);
      int rc = q.Step();
      if (rc == SQLITE_ROW) cur = LockFrom(q);
      else if (rc != SQLITE_DONE) {
        finish(false);
        return DbError(db_, "reading lock");
      }
    }
    if (cur && journal_rows::LockKeepsOut(*cur, want, now)) {
      if (held_by) *held_by = *cur;
      finish(false);
      return false;
    }
    Stmt s(db_, "INSERT OR REPLACE INTO locks(cluster, run_id, owner_host, owner_pid, since, "
                "expires, owner_start) VALUES (?,?,?,?,?,?,?)");
    s.Bind(want.cluster).Bind(want.run).Bind(want.owner_host).Bind(want.owner_pid)
        .Bind(want.since).Bind(want.expires).Bind(want.owner_start);
    if (Status d = Done(s, "taking lock"); !d) {
      finish(false);
      return d.error();
    }
    finish(true);
    return true;
  }

  Status RenewLock(const LockInfo& mine, const std::string& expires) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, "UPDATE locks SET expires=? WHERE cluster=? AND run_id=? AND owner_host=? AND "
                "owner_pid=? AND owner_start=?");
    s.Bind(expires).Bind(mine.cluster).Bind(mine.run).Bind(mine.owner_host).Bind(mine.owner_pid)
        .Bind(mine.owner_start);
    if (Status d = Done(s, "renewing lock"); !d) return d;
    if (sqlite3_changes(db_) == 0) return journal_rows::LockLost(mine);
    return OkStatus();
  }

  Status ReleaseLock(const LockInfo& mine) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, "DELETE FROM locks WHERE cluster=? AND run_id=? AND owner_host=? AND owner_pid=? "
                "AND owner_start=?");
    s.Bind(mine.cluster).Bind(mine.run).Bind(mine.owner_host).Bind(mine.owner_pid)
        .Bind(mine.owner_start);
    return Done(s, "releasing lock");
  }

  Status ForceUnlock(const std::string& run) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, "DELETE FROM locks WHERE run_id=?");
    s.Bind(run);
    if (Status d = Done(s, "unlocking"); !d) return d;
    if (sqlite3_changes(db_) == 0)
      return Diagnostic::Error("journal.no-lock", fmt::format("run {} holds no lock", run));
    return OkStatus();
  }

  Result<std::optional<LockInfo>> GetLock(const std::string& cluster) override {
    std::lock_guard lock(mu_);
    Stmt q(db_, kLockSelect " WHERE cluster=?");
    q.Bind(cluster);
    int rc = q.Step();
    if (rc == SQLITE_ROW) return std::optional<LockInfo>(LockFrom(q));
    if (rc == SQLITE_DONE) return std::optional<LockInfo>();
    return DbError(db_, "reading lock");
  }

  Result<std::optional<LockInfo>> LockOfRun(const std::string& run) override {
    std::lock_guard lock(mu_);
    Stmt q(db_, kLockSelect " WHERE run_id=?");
    q.Bind(run);
    int rc = q.Step();
    if (rc == SQLITE_ROW) return std::optional<LockInfo>(LockFrom(q));
    if (rc == SQLITE_DONE) return std::optional<LockInfo>();
    return DbError(db_, "reading lock");
  }

  Result<bool> KnowsNode(const std::string& node) override {
    std::lock_guard lock(mu_);
    Stmt q(db_, "SELECT 1 FROM steps WHERE node=? UNION ALL SELECT 1 FROM nodes WHERE node=? "
                "LIMIT 1");
    q.Bind(node).Bind(node);
    if (!q.ok()) return DbError(db_, "reading nodes");
    int rc = q.Step();
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return DbError(db_, "reading nodes");
  }

  Result<ChainReport> VerifyChain(const std::string& anchor) override {
    std::lock_guard lock(mu_);
    // One read transaction: the chain and the tables as of one moment.
    if (Status s = Exec("BEGIN"); !s) return s.error();
    auto report = VerifyLocked(anchor);
    (void)Exec("COMMIT");
    return report;
  }

 private:
  // ---- the hash chain -------------------------------------------------------------------
  using Entry = chain::Entry;

  // The row of `tbl` keyed `key` as the chain records it: every column by name (big texts as
  // their SHA-256, a JSON detail as written), minus what changes without meaning (a node's
  // note, rewritten at every heartbeat). nullopt when there is no such row.
  Result<std::optional<nlohmann::json>> RowImage(const std::string& tbl, const std::string& key) {
    std::string sql;
    std::vector<std::string> binds;
    if (tbl == "runs") {
      sql = "SELECT * FROM runs WHERE id=?";
      binds = {key};
    } else if (tbl == "steps" || tbl == "facts") {
      sql = "SELECT * FROM " + tbl + " WHERE id=?";
      binds = {key};
    } else if (tbl == "nodes") {
      auto slash = key.find('/');
      sql = "SELECT * FROM nodes WHERE run_id=? AND node=?";
      binds = {key.substr(0, slash), slash == std::string::npos ? "" : key.substr(slash + 1)};
    } else {
      return Diagnostic::Error("journal.chain", "no chained table " + tbl);
    }
    Stmt q(db_, sql.c_str());
    if (tbl == "steps" || tbl == "facts") q.Bind(static_cast<int64_t>(std::atoll(key.c_str())));
    else for (const std::string& b : binds) q.Bind(b);
    if (!q.ok()) return DbError(db_, "reading a row for the chain");
    int rc = q.Step();
    if (rc == SQLITE_DONE) return std::optional<nlohmann::json>();
    if (rc != SQLITE_ROW) return DbError(db_, "reading a row for the chain");
    return std::optional<nlohmann::json>(journal_rows::ImageFrom(tbl, q));
  }

  Result<std::optional<Entry>> LastEntry(const char* where = nullptr, const std::string& tbl = {},
                                         const std::string& key = {}) {
    std::string sql = "SELECT seq, tbl, row_key, how, image, prev_hash, hash FROM chain";
    if (where) sql += where;
    sql += " ORDER BY seq DESC LIMIT 1";
    Stmt q(db_, sql.c_str());
    if (where) q.Bind(tbl).Bind(key);
    if (!q.ok()) return DbError(db_, "reading the chain");
    int rc = q.Step();
    if (rc == SQLITE_DONE) return std::optional<Entry>();
    if (rc != SQLITE_ROW) return DbError(db_, "reading the chain");
    return std::optional<Entry>(EntryFrom(q));
  }

  static Entry EntryFrom(const Stmt& q) {
    return {q.Int(0), q.Text(1), q.Text(2), q.Text(3), q.Text(4), q.Text(5), q.Text(6)};
  }

  // Appends the row's image now; inside the caller's transaction. `skip_same`: not when the
  // row's last entry already says the same (a node whose note alone changed).
  Status Append(const std::string& tbl, const std::string& key, const std::string& how,
                bool skip_same) {
    auto image = RowImage(tbl, key);
    if (!image) return image.error();
    if (!image->has_value()) return DbError(db_, "chaining a row that is not there");
    std::string canonical = CanonicalJson(**image);
    if (skip_same) {
      auto mine = LastEntry(" WHERE tbl=? AND row_key=?", tbl, key);
      if (!mine) return mine.error();
      if (mine->has_value() && (*mine)->image == canonical) return OkStatus();
    }
    auto last = LastEntry();
    if (!last) return last.error();
    const Entry e = chain::NextEntry(last->has_value() ? &**last : nullptr, tbl, key, how, std::move(canonical));
    Stmt ins(db_, "INSERT INTO chain(seq, tbl, row_key, how, image, prev_hash, hash) "
                  "VALUES (?,?,?,?,?,?,?)");
    ins.Bind(e.seq).Bind(e.tbl).Bind(e.key).Bind(e.how).Bind(e.image).Bind(e.prev).Bind(e.hash);
    return Done(ins, "appending to the chain");
  }

  // One write and its chain entry, in one transaction (BEGIN IMMEDIATE: no other process's
  // entry can come between reading the chain's head and appending to it). `write` returns
  // the key of the row it wrote.
  Status Chained(const std::string& tbl, const std::function<Result<std::string>()>& write) {
    if (Status s = Exec("BEGIN IMMEDIATE"); !s) return s;
    auto key = write();
    Status s = key ? Append(tbl, *key, "write", tbl == "nodes") : Status(key.error());
    if (!s) {
      (void)Exec("ROLLBACK");
      return s;
    }
    return Exec("COMMIT");
  }

  // Migration 3: the rows written before there was a chain, taken in as they are.
  Status AdoptRows() {
    for (const char* tbl : kChainedTables) {
      const std::string t = tbl;
      std::string sql = t == "runs"    ? "SELECT id FROM runs ORDER BY started_at, id"
                        : t == "nodes" ? "SELECT run_id || '/' || node FROM nodes ORDER BY run_id, node"
                                       : "SELECT id FROM " + t + " ORDER BY id";
      std::vector<std::string> keys;
      {
        Stmt q(db_, sql.c_str());
        if (!q.ok()) return DbError(db_, "adopting rows into the chain");
        while (q.Step() == SQLITE_ROW) keys.push_back(q.Text(0));
      }
      for (const std::string& k : keys)
        if (Status s = Append(t, k, "adopt", false); !s) return s;
    }
    return OkStatus();
  }

  Result<ChainReport> VerifyLocked(const std::string& anchor) {
    std::vector<Entry> entries;
    {
      Stmt q(db_, "SELECT seq, tbl, row_key, how, image, prev_hash, hash FROM chain ORDER BY seq");
      if (!q.ok()) return DbError(db_, "reading the chain");
      int rc;
      while ((rc = q.Step()) == SQLITE_ROW) entries.push_back(EntryFrom(q));
      if (rc != SQLITE_DONE) return DbError(db_, "reading the chain");
    }
    std::vector<chain::Row> rows;
    for (const char* tbl : kChainedTables) {
      const std::string t = tbl;
      const std::string sql = "SELECT * FROM " + t + journal_rows::ChainOrderOf(t);
      Stmt q(db_, sql.c_str());
      if (!q.ok()) return DbError(db_, "reading " + t);
      int rc;
      while ((rc = q.Step()) == SQLITE_ROW) {
        nlohmann::json now = journal_rows::ImageFrom(t, q);
        std::string key = journal_rows::ChainKeyOf(t, now);
        rows.push_back({t, std::move(key), std::move(now)});
      }
      if (rc != SQLITE_DONE) return DbError(db_, "reading " + t);
    }
    return chain::Verify(entries, rows, anchor);
  }

  // ---------------------------------------------------------------------------------------

  static RunRecord RunFrom(const Stmt& s) { return journal_rows::RunFrom(s); }
  static LockInfo LockFrom(const Stmt& s) { return journal_rows::LockFrom(s); }
  Result<std::vector<StepRecord>> ReadSteps(Stmt& s) {
    if (!s.ok()) return DbError(db_, "reading steps");
    std::vector<StepRecord> out;
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) out.push_back(journal_rows::StepFrom(s));
    if (rc != SQLITE_DONE) return DbError(db_, "reading steps");
    return out;
  }
  Status Exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "?";
      sqlite3_free(err);
      return Diagnostic::Error("journal.sqlite", "journal: " + msg);
    }
    return OkStatus();
  }
  Status Done(Stmt& s, const std::string& what) {
    if (!s.ok() || s.Step() != SQLITE_DONE) return DbError(db_, what);
    return OkStatus();
  }

  sqlite3* db_;
  std::mutex mu_;
};

}  // namespace

Result<std::unique_ptr<Journal>> OpenSqliteJournal(const std::string& path) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    Diagnostic d = DbError(db, "opening " + path);
    sqlite3_close(db);
    return d;
  }
  sqlite3_busy_timeout(db, 10000);
  auto j = std::make_unique<SqliteJournal>(db);
  if (Status s = j->Init(); !s) {
    Diagnostic d = s.error();
    d.message += " (" + path + ")";
    return d;
  }
  return std::unique_ptr<Journal>(std::move(j));
}

std::string DefaultJournalPath() {
  if (const char* p = std::getenv("PLUMB_JOURNAL"); p && *p) return p;
  if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x)
    return std::string(x) + "/plumb/journal.db";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/state/plumb/journal.db";
}

}  // namespace plumb::plans
