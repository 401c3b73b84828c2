// What a real watch runs on (plans/watch/watch_world.h).
#include "plans/watch/watch_world.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace plumb::plans::watch {

Result<std::unique_ptr<EventsOutput>> EventsOutput::Open(const std::string& path, std::FILE* std_out) {
  if (path.empty() || path == "-")
    return std::unique_ptr<EventsOutput>(new EventsOutput(std_out, "stdout", false));
  std::FILE* f = std::fopen(path.c_str(), "ae");
  if (f == nullptr)
    return Diagnostic::Error("watch.events",
                             fmt::format("cannot open --events {}: {}", path, std::strerror(errno)));
  return std::unique_ptr<EventsOutput>(new EventsOutput(f, path, true));
}

EventsOutput::~EventsOutput() {
  if (owned_) std::fclose(file_);
}

WatchDeps WatchWorld::Deps() {
  WatchDeps deps;
  deps.desired = &desired;
  deps.pool = &pool;
  deps.clock = &clock;
  deps.events = &sink;
  return deps;
}

std::string FdLimitWarning(unsigned long long soft, bool unlimited, size_t nodes, int fanout) {
  const unsigned long long need =
      static_cast<unsigned long long>(nodes) + static_cast<unsigned long long>(fanout) + 64;
  if (unlimited || soft >= need) return "";
  return fmt::format("the open-file limit ({}) is below what {} sessions need (~{}); raise it "
                     "(ulimit -n, LimitNOFILE=)",
                     soft, nodes, need);
}

}  // namespace plumb::plans::watch
