#pragma once
/// A SQLite journal in a fresh temporary file, removed (with its -wal and -shm) at the end of
/// the test. `prefix` names the file, so a left-over one says which test made it.
#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include <fmt/format.h>

#include "plans/journal.h"

namespace plumb::fakes {

struct TempJournal {
  explicit TempJournal(const std::string& prefix = "plumb-journal")
      : path((std::filesystem::temp_directory_path() /
              fmt::format("{}-{:x}.db", prefix, std::random_device{}()))
                 .string()) {
    auto o = plans::OpenSqliteJournal(path);
    REQUIRE(o.ok());
    j = std::move(*o);
  }
  ~TempJournal() {
    j.reset();
    for (const char* e : {"", "-wal", "-shm"}) std::filesystem::remove(path + e);
  }
  TempJournal(const TempJournal&) = delete;
  TempJournal& operator=(const TempJournal&) = delete;

  std::string path;
  std::unique_ptr<plans::Journal> j;
};

}  // namespace plumb::fakes
