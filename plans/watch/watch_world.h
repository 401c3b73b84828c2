#pragma once
/// What a real watch runs on besides SSH, kept alive for the watch: its events output, the repo
/// at the ref, the worker threads, the clock; and what the process must be told of its needs.
#include <cstdio>
#include <memory>
#include <string>

#include "inventory/load.h"
#include "plans/core/clock.h"
#include "plans/watch/desired_source.h"
#include "plans/watch/task_pool.h"
#include "plans/watch/watch_event.h"
#include "plans/watch/watcher.h"
#include "schemas/result.h"

namespace plumb::plans::watch {

/// Where the events go: --events FILE, appended (a restart keeps the history), or `std_out`
/// when the path is "" or "-". Closes the file it opened.
class EventsOutput {
 public:
  /// An error ("cannot open --events PATH: why") when the file cannot be opened for appending.
  static Result<std::unique_ptr<EventsOutput>> Open(const std::string& path, std::FILE* std_out);
  ~EventsOutput();
  EventsOutput(const EventsOutput&) = delete;
  EventsOutput& operator=(const EventsOutput&) = delete;
  std::FILE* file() const { return file_; }
  const std::string& name() const { return name_; }   ///< "stdout", or the path

 private:
  EventsOutput(std::FILE* file, std::string name, bool owned)
      : file_(file), name_(std::move(name)), owned_(owned) {}
  std::FILE* file_;
  std::string name_;
  bool owned_;
};

/// The repo at the ref (`repo`), `fanout` worker threads, the real clock, and the events as
/// JSON lines on `events`.
struct WatchWorld {
  WatchWorld(inventory::LoadOptions repo, int fanout, const EventsOutput& events)
      : desired(std::move(repo)), pool(fanout), sink(events.file(), events.name()) {}
  GitDesiredSource desired;
  ThreadPool pool;
  RealClock clock;
  JsonLinesSink sink;
  /// WatchDeps with the desired source, pool, clock and events set; the caller adds the
  /// shells, the modules, the textfile writer and the log.
  WatchDeps Deps();
};

/// One session per node is one file descriptor per node. The warning for an open-file limit of
/// `soft` descriptors (`unlimited`: none) below what `nodes` sessions with `fanout` workers
/// need; "" when it is enough.
std::string FdLimitWarning(unsigned long long soft, bool unlimited, size_t nodes, int fanout);

}  // namespace plumb::plans::watch
