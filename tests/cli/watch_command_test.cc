// `plumb watch`'s command line (cli/watch_command.h): each flag lands in WatchArgs.
#include <doctest/doctest.h>

#include <string>

#include <CLI/CLI.hpp>

#include "cli/parse_args.h"
#include "cli/watch_command.h"

using namespace plumb;
using cli::testing::ParseArgs;

TEST_CASE("watch_command: the flags land in WatchFlags, the outputs and the source") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  cli::WatchArgs a;
  cli::AddWatchCommand(app, g, a);
  ParseArgs(app, {"watch", "--ref", "origin/main", "--interval", "5m", "--spread", "0.5",
                  "--fanout", "32", "--limit", "@h100", "--events", "e.jsonl", "--listen",
                  "127.0.0.1:9472", "--textfile", "m.prom", "--once", "--rounds", "3",
                  "--ref-poll", "10s", "--accept-new-host-keys"});
  CHECK(g.ref == "origin/main");
  CHECK(a.flags.interval == "5m");
  CHECK(a.flags.spread == doctest::Approx(0.5));
  CHECK(a.flags.fanout == 32);
  CHECK(a.flags.limit == "@h100");
  CHECK(a.events == "e.jsonl");
  CHECK(a.listen == "127.0.0.1:9472");
  CHECK(a.textfile == "m.prom");
  CHECK(a.flags.once);
  CHECK(a.flags.rounds == 3);
  CHECK(a.flags.ref_poll == "10s");
  CHECK(a.accept_new_host_keys);
}

TEST_CASE("watch_command: defaults are the watch's own and shown; it takes no --format") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  cli::WatchArgs a;
  CLI::App* sub = cli::AddWatchCommand(app, g, a);
  CHECK(sub->get_option("--fanout")->get_default_str() == "16");   // not gather's 64
  CHECK(sub->get_option("--interval")->get_default_str() == "60s");
  CHECK(sub->get_option("--ref-poll")->get_default_str() == "5s");
  CHECK_THROWS_AS(ParseArgs(app, {"watch", "--format", "json"}), CLI::ExtrasError);
}
