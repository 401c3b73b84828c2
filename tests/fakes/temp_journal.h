#pragma once
/// A journal in a fresh store (temp_store.h: a SQLite file, or a PostgreSQL database when the
/// tests run against one), removed at the end of the test. `prefix` names it, so a left-over
/// one says which test made it.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "fakes/temp_store.h"
#include "plans/store/journal.h"
#include "plans/store/store.h"

namespace plumb::fakes {

struct TempJournal {
  explicit TempJournal(const std::string& prefix = "plumb-journal")
      : where(prefix), path(where.store) {
    auto o = plans::OpenStore(path);
    REQUIRE_MESSAGE(o.ok(), (o.ok() ? "" : o.error().ToString()));
    j = std::move(*o);
  }
  ~TempJournal() { j.reset(); }   // before `where` drops the store
  TempJournal(const TempJournal&) = delete;
  TempJournal& operator=(const TempJournal&) = delete;

  TempStore where;
  std::string path;   ///< the store: what OpenStore and --store take
  std::unique_ptr<plans::Journal> j;
};

}  // namespace plumb::fakes
