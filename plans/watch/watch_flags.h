#pragma once
/// `plumb watch`'s command line as the Watcher's options: durations parsed, ranges checked, and
/// the modules a watch follows. cmd/watch.cc wires the rest (signals, SSH, the endpoint).
#include <string>
#include <vector>

#include "modules/module.h"
#include "plans/watch/watcher.h"
#include "schemas/result.h"

namespace plumb::plans::watch {

struct WatchFlags {
  std::string interval = "60s";
  std::string ref_poll = "5s";
  double spread = 1.0;
  int fanout = 16;
  int rounds = 0;
  bool once = false;
  std::string limit;
};

/// The options, or an error (code "watch.flags") whose message says which flag takes what.
/// --once: one round, every node at once (at most --fanout).
Result<WatchOptions> WatchOptionsFrom(const WatchFlags& f);

/// The modules a watch follows: every pin; not the health modules, which measure (`plumb
/// health --format prom` on a timer covers them) and whose probes would cost every node every
/// round.
std::vector<const modules::Module*> WatchedModules(const std::vector<const modules::Module*>& all);

}  // namespace plumb::plans::watch
