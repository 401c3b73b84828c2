#include "plans/store/journal_schema.h"

#include <iterator>
#include <string_view>

#include "plans/store/journal.h"

namespace plumb::plans {
namespace {

// {int}: a 64-bit integer column; {serial_pk}: an auto-numbered 64-bit primary key.
constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE runs (
  id          TEXT PRIMARY KEY,
  cluster     TEXT NOT NULL,
  plan_digest TEXT NOT NULL,
  plan_json   TEXT NOT NULL,
  commit_sha  TEXT NOT NULL,
  repo        TEXT NOT NULL DEFAULT '',
  started_at  TEXT NOT NULL,
  ended_at    TEXT NOT NULL DEFAULT '',
  owner_host  TEXT NOT NULL DEFAULT '',
  owner_pid   {int} NOT NULL DEFAULT 0,
  outcome     TEXT NOT NULL DEFAULT 'running',
  summary     TEXT NOT NULL DEFAULT ''
);
CREATE TABLE steps (
  id          {serial_pk},
  run_id      TEXT NOT NULL REFERENCES runs(id),
  node        TEXT NOT NULL,
  step        TEXT NOT NULL,
  detail      TEXT NOT NULL DEFAULT '{}',
  started_at  TEXT NOT NULL,
  ended_at    TEXT NOT NULL DEFAULT '',
  duration_ms {int} NOT NULL DEFAULT 0,
  outcome     TEXT NOT NULL DEFAULT '',
  error       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX steps_by_run_node ON steps(run_id, node);
CREATE INDEX steps_by_node ON steps(node);
CREATE TABLE nodes (
  run_id        TEXT NOT NULL REFERENCES runs(id),
  node          TEXT NOT NULL,
  status        TEXT NOT NULL,
  last_step     TEXT NOT NULL DEFAULT '',
  admin_drained {int} NOT NULL DEFAULT 0,
  admin_reason  TEXT NOT NULL DEFAULT '',
  error         TEXT NOT NULL DEFAULT '',
  started_at    TEXT NOT NULL DEFAULT '',
  ended_at      TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (run_id, node)
);
CREATE TABLE facts (
  id        {serial_pk},
  run_id    TEXT NOT NULL,
  node      TEXT NOT NULL,
  phase     TEXT NOT NULL,
  digest    TEXT NOT NULL,
  facts     TEXT NOT NULL,
  taken_at  TEXT NOT NULL
);
CREATE TABLE locks (
  cluster    TEXT PRIMARY KEY,
  run_id     TEXT NOT NULL,
  owner_host TEXT NOT NULL,
  owner_pid  {int} NOT NULL,
  since      TEXT NOT NULL,
  expires    TEXT NOT NULL
);
)sql",
    // 2: what a running node waits for (`plumb runs RUN`); the lock owner's process start, so
    // a reused pid is not taken for the owner.
    R"sql(
ALTER TABLE nodes ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE locks ADD COLUMN owner_start TEXT NOT NULL DEFAULT '';
)sql",
    // 3: who stands behind a run (operator, CI actor, approver, the commit's author, committer
    // and signer), the commit a plan was made at when applied at another, and the hash chain:
    // every write to runs, steps, nodes and facts appends the row as written, with the hash of
    // the entry before it (see "Tamper evidence" in journal.h). The rows already here are
    // taken into the chain as they are (how = 'adopt') in the same transaction.
    R"sql(
ALTER TABLE runs ADD COLUMN plan_commit TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN who TEXT NOT NULL DEFAULT '{}';
CREATE TABLE chain (
  seq       {int} PRIMARY KEY,
  tbl       TEXT NOT NULL,
  row_key   TEXT NOT NULL,
  how       TEXT NOT NULL,
  image     TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash      TEXT NOT NULL
);
CREATE INDEX chain_by_row ON chain(tbl, row_key);
)sql",
};
static_assert(std::size(kMigrations) == kJournalSchemaVersion);

void Replace(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

}  // namespace

std::vector<std::string> JournalMigrations(SqlDialect dialect) {
  const bool pg = dialect == SqlDialect::kPostgres;
  std::vector<std::string> out;
  for (std::string_view m : kMigrations) {
    std::string sql(m);
    Replace(sql, "{serial_pk}", pg ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT");
    Replace(sql, "{int}", pg ? "BIGINT" : "INTEGER");
    out.push_back(std::move(sql));
  }
  return out;
}

}  // namespace plumb::plans
