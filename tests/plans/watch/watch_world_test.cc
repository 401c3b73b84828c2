// What a real watch runs on (plans/watch/watch_world): the events output, the world's deps, and
// the open-file limit warning.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "plans/watch/watch_world.h"

using namespace plumb;
namespace fs = std::filesystem;

TEST_CASE("watch world: the open-file limit is warned about only when short") {
  using plans::watch::FdLimitWarning;
  CHECK(FdLimitWarning(1024, false, 1024, 16) ==
        "the open-file limit (1024) is below what 1024 sessions need (~1104); raise it "
        "(ulimit -n, LimitNOFILE=)");
  CHECK(FdLimitWarning(1104, false, 1024, 16) == "");
  CHECK(FdLimitWarning(0, true, 100000, 16) == "");
}

TEST_CASE("watch world: events are appended to a file (a restart keeps them), or go to stdout") {
  const fs::path dir = fs::temp_directory_path() / fmt::format("plumb-watch-world-{:x}", std::random_device{}());
  fs::create_directories(dir);
  const std::string path = (dir / "events.jsonl").string();
  { std::ofstream(path) << "{\"earlier\":true}\n"; }
  {
    auto out = plans::watch::EventsOutput::Open(path, stdout);
    REQUIRE(out.ok());
    CHECK((*out)->name() == path);
    CHECK((*out)->file() != stdout);
    plans::watch::JsonLinesSink sink((*out)->file(), (*out)->name());
    plans::watch::WatchEvent e;
    e.node = "gpu001";
    REQUIRE(sink.Emit(e).ok());
  }
  std::ifstream in(path);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  CHECK(first == "{\"earlier\":true}");
  CHECK(second.find("\"gpu001\"") != std::string::npos);

  auto dash = plans::watch::EventsOutput::Open("-", stdout);
  REQUIRE(dash.ok());
  CHECK((*dash)->file() == stdout);
  CHECK((*dash)->name() == "stdout");

  auto missing = plans::watch::EventsOutput::Open((dir / "no" / "events").string(), stdout);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message ==
        "cannot open --events " + (dir / "no" / "events").string() + ": No such file or directory");
  fs::remove_all(dir);
}

TEST_CASE("watch world: its deps point at its repo, workers, clock and events") {
  auto out = plans::watch::EventsOutput::Open("", stdout);
  REQUIRE(out.ok());
  inventory::LoadOptions repo;
  repo.repo = "/nowhere";
  repo.ref = "main";
  plans::watch::WatchWorld world(repo, 2, **out);
  plans::watch::WatchDeps deps = world.Deps();
  CHECK(deps.desired == &world.desired);
  CHECK(deps.desired->ref() == "main");
  CHECK(deps.pool == &world.pool);
  CHECK(deps.clock == &world.clock);
  CHECK(deps.events == &world.sink);
  CHECK_FALSE(deps.shells);
}
