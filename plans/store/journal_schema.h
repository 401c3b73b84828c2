#pragma once
// The journal's schema, one list for both stores: SQLite (the default) and PostgreSQL (a shared
// store) hold the same tables at the same versions, and differ only in how they spell a 64-bit
// integer and an auto-numbered key.
#include <string>
#include <vector>

namespace plumb::plans {

enum class SqlDialect { kSqlite, kPostgres };

/// Migration i brings the schema from version i to i+1 (kJournalSchemaVersion in all), in
/// `dialect`'s SQL. Never edit a released one: add an entry.
std::vector<std::string> JournalMigrations(SqlDialect dialect);

}  // namespace plumb::plans
