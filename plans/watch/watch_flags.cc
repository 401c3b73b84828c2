#include "plans/watch/watch_flags.h"

#include <cstdlib>
#include <optional>

#include "inventory/version.h"

namespace plumb::plans::watch {
namespace {

// "60s", "5m", "1h30m", or a plain number of seconds.
std::optional<long> FlagSeconds(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos && s.size() < 8)
    return std::atol(s.c_str());
  return inventory::ParseDuration(s);
}

}  // namespace

Result<WatchOptions> WatchOptionsFrom(const WatchFlags& f) {
  auto interval = FlagSeconds(f.interval);
  auto ref_poll = FlagSeconds(f.ref_poll);
  if (!interval || *interval < 1 || !ref_poll || *ref_poll < 1)
    return Diagnostic::Error("watch.flags", "--interval and --ref-poll take a duration of at "
                                            "least 1s (60s, 5m, 1h30m)");
  if (f.fanout < 1 || f.rounds < 0 || f.spread < 0 || f.spread > 1)
    return Diagnostic::Error("watch.flags", "--fanout must be at least 1, --rounds at least 0, "
                                            "--spread between 0 and 1");
  WatchOptions opt;
  opt.interval = std::chrono::seconds(*interval);
  opt.spread = f.once ? 0.0 : f.spread;
  opt.rounds = f.once ? 1 : f.rounds;
  opt.limit = f.limit;
  opt.ref_poll = std::chrono::seconds(*ref_poll);
  return opt;
}

std::vector<const modules::Module*> WatchedModules(const std::vector<const modules::Module*>& all) {
  std::vector<const modules::Module*> out;
  for (const modules::Module* m : all)
    if (!m->Info().IsHealth()) out.push_back(m);
  return out;
}

}  // namespace plumb::plans::watch
