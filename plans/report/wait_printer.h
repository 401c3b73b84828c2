#pragma once
/// What `plumb bmc` shows while it waits on a BMC (a firmware task, a power state).
///
/// On a TTY, one line redrawn after every look ("gpu001: waiting for task
/// /redfish/v1/TaskService/Tasks/7: Running 42% (1m30s of 45m)"); otherwise (a CI log) a line
/// when the wait starts or its state changes, and a heartbeat line every `beat` in between.
/// Never a secret: links and states only. Tested in tests/plans/report/wait_printer_test.cc.
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>

#include "modules/transport/wait_progress.h"

namespace plumb::plans::report {

class WaitPrinter {
 public:
  /// `tty`: redraw one line on `out`; else heartbeat lines every `beat`.
  WaitPrinter(std::FILE* out, bool tty, std::chrono::seconds beat)
      : out_(out), tty_(tty), beat_(beat) {}

  /// Shows one look at a wait (thread-safe).
  void Show(const transport::WaitProgress& p);
  /// Ends a redrawn line before other output (thread-safe; nothing when none is open).
  void Done();
  /// The text Show would print for `p` at `now`, or nullopt when it prints nothing (heartbeat
  /// not due).
  std::optional<std::string> Line(const transport::WaitProgress& p,
                                  std::chrono::steady_clock::time_point now);

 private:
  std::FILE* out_;
  bool tty_;
  std::chrono::seconds beat_;
  std::mutex mu_;
  bool line_open_ = false;
  std::string last_key_;   // node + what + state: a change prints at once
  std::optional<std::chrono::steady_clock::time_point> last_line_;
};

}  // namespace plumb::plans::report
