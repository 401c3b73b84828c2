#include "plans/store/journal_schema.h"

#include <doctest/doctest.h>

#include "plans/store/journal.h"

namespace plumb::plans {

TEST_CASE("journal schema: one list of migrations, spelt in each store's SQL") {
  const auto lite = JournalMigrations(SqlDialect::kSqlite);
  const auto pg = JournalMigrations(SqlDialect::kPostgres);
  REQUIRE(lite.size() == static_cast<size_t>(kJournalSchemaVersion));
  REQUIRE(pg.size() == lite.size());
  for (size_t i = 0; i < lite.size(); ++i) {
    CAPTURE(i);
    // Every placeholder is spelt out; neither store gets the other's types.
    for (const char* placeholder : {"{int}", "{serial_pk}"}) {
      CHECK(lite[i].find(placeholder) == std::string::npos);
      CHECK(pg[i].find(placeholder) == std::string::npos);
    }
    CHECK(lite[i].find("BIGINT") == std::string::npos);
    CHECK(lite[i].find("BIGSERIAL") == std::string::npos);
    CHECK(pg[i].find("INTEGER") == std::string::npos);
    CHECK(pg[i].find("AUTOINCREMENT") == std::string::npos);
  }
  // The auto-numbered keys: steps and facts ids, in each store's words.
  CHECK(lite[0].find("id          INTEGER PRIMARY KEY AUTOINCREMENT") != std::string::npos);
  CHECK(pg[0].find("id          BIGSERIAL PRIMARY KEY") != std::string::npos);
  CHECK(pg[0].find("owner_pid   BIGINT NOT NULL DEFAULT 0") != std::string::npos);
  // The same tables at each version: the text differs only where the types do.
  auto normalize = [](std::string s) {
    for (const char* from : {"INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY"}) {
      for (size_t at = s.find(from); at != std::string::npos; at = s.find(from))
        s.replace(at, std::string(from).size(), "KEY");
    }
    for (const char* from : {"INTEGER", "BIGINT"}) {
      for (size_t at = s.find(from); at != std::string::npos; at = s.find(from))
        s.replace(at, std::string(from).size(), "INT");
    }
    return s;
  };
  for (size_t i = 0; i < lite.size(); ++i) CHECK(normalize(lite[i]) == normalize(pg[i]));
}

}  // namespace plumb::plans
