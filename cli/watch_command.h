#pragma once
/// `plumb watch`'s command line: description, flags, help, the events and examples footer,
/// filling WatchArgs. cmd/watch.cc runs what it parsed. Tested in
/// tests/cli/watch_command_test.cc.
#include <string>

#include <CLI/CLI.hpp>

#include "cli/global_options.h"
#include "plans/watch/watch_flags.h"

namespace plumb::cli {

struct WatchArgs {
  // fanout 16, not gather's 64: each worker thread keeps about half a MB of allocator pages for
  // the watch's whole life (mimalloc's per-thread heaps; 256 nodes: 53 MB at 16, 88 MB at 64),
  // and a watch needs few at once: its reads are spread over the interval (1024 nodes every
  // 60 s is ~17 reads a second of ~0.3 s each), and start-up's handshakes take 1024/16 x ~0.3 s.
  plans::watch::WatchFlags flags;
  std::string events;     ///< --events FILE (appended); empty = stdout
  std::string listen;     ///< --listen ADDRESS:PORT; empty = no endpoint
  std::string textfile;   ///< --textfile PATH
  bool accept_new_host_keys = false;
};

/// Adds `plumb watch` to `app`, its flags filling `g` (--repo, --ref, --working-tree) and `a`.
/// The callback is the caller's.
CLI::App* AddWatchCommand(CLI::App& app, GlobalOptions& g, WatchArgs& a);

}  // namespace plumb::cli
