#pragma once
/// A fresh, empty store for one test, removed at its end: a SQLite file in a new temporary
/// directory, or, when $PLUMB_TEST_PG_HOST names the socket directory of a PostgreSQL server
/// (tests/store/with_postgres.sh starts one), a new database on it. The journal and lock tests
/// run once per backend: the same tests, the same expectations.
#include <doctest/doctest.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include <fmt/format.h>

#include "plans/store/journal.h"
#include "plans/store/store.h"

namespace plumb::fakes {

/// The PostgreSQL server the tests were pointed at, or "" for SQLite.
inline std::string TestPgHost() {
  const char* h = std::getenv("PLUMB_TEST_PG_HOST");
  return h != nullptr ? h : "";
}
inline bool TestingPostgres() { return !TestPgHost().empty(); }

inline std::string PgUrl(const std::string& db) {
  const char* port = std::getenv("PLUMB_TEST_PG_PORT");
  return fmt::format("postgresql:///{}?host={}&port={}&user=plumb", db, TestPgHost(),
                     port != nullptr ? port : "5432");
}

/// Runs `sql` on the database behind `store` behind plumb's back, as someone with psql or
/// sqlite3 would. Returns the error message, "" on success.
inline std::string RawExec(const std::string& store, const std::string& sql) {
  if (plans::IsPostgresStore(store)) {
    PGconn* c = PQconnectdb(store.c_str());
    std::string err;
    if (PQstatus(c) != CONNECTION_OK) {
      err = PQerrorMessage(c);
    } else {
      PGresult* r = PQexec(c, sql.c_str());
      const ExecStatusType s = PQresultStatus(r);
      if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) err = PQresultErrorMessage(r);
      PQclear(r);
    }
    PQfinish(c);
    return err;
  }
  sqlite3* raw = nullptr;
  if (sqlite3_open(store.c_str(), &raw) != SQLITE_OK) return "cannot open " + store;
  char* e = nullptr;
  const int rc = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &e);
  std::string err = rc == SQLITE_OK ? "" : (e ? e : "?");
  sqlite3_free(e);
  sqlite3_close(raw);
  return err;
}

struct TempStore {
  explicit TempStore(const std::string& prefix = "plumb-journal") {
    const unsigned id = std::random_device{}();
    if (TestingPostgres()) {
      db = fmt::format("{}_{:x}", prefix, id);
      for (char& c : db)
        if (c == '-') c = '_';
      const std::string err = RawExec(PgUrl("postgres"), "CREATE DATABASE " + db);
      REQUIRE_MESSAGE(err.empty(), err);
      store = PgUrl(db);
      return;
    }
    std::filesystem::path dir = std::filesystem::is_directory("/dev/shm")
                                    ? std::filesystem::path("/dev/shm")
                                    : std::filesystem::temp_directory_path();
    store = (dir / fmt::format("{}-{:x}/j.db", prefix, id)).string();
  }
  ~TempStore() {
    if (!db.empty()) {
      (void)RawExec(PgUrl("postgres"), "DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
      return;
    }
    std::filesystem::remove_all(std::filesystem::path(store).parent_path());
  }
  TempStore(const TempStore&) = delete;
  TempStore& operator=(const TempStore&) = delete;

  /// RawExec on this store; the test fails when the SQL does.
  void Tamper(const std::string& sql) const {
    if (!TestingPostgres()) std::filesystem::create_directories(std::filesystem::path(store).parent_path());
    const std::string err = RawExec(store, sql);
    REQUIRE_MESSAGE(err.empty(), (sql + ": " + err));
  }

  std::string store;   ///< a file path or a postgresql:// URL: what --store takes
  std::string db;      ///< the PostgreSQL database's name, or ""
};

}  // namespace plumb::fakes
