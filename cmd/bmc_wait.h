#pragma once
/// What `plumb bmc` shows and does while it waits on a BMC (a firmware task, a power state),
/// and how Ctrl-C / SIGTERM end such a wait.
///
/// Progress: on a TTY, one line on stderr redrawn after every look ("gpu001: task
/// /redfish/v1/TaskService/Tasks/7: Running 42% (1m30s of 45m)"); otherwise (a CI log) a line
/// when the wait starts or its state changes, and a heartbeat line every 30 s in between
/// (PLUMB_HEARTBEAT_S=N: every N s). Never a secret: links and states only.
///
/// Signals: the first SIGINT or SIGTERM sets the cancel signal every BMC client waits on (each
/// wait ends within a second or two, the sessions are deleted as the clients close, the verb
/// says what was in flight and exits 130); a second one exits 130 at once.
#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "modules/transport/cancel_signal.h"
#include "modules/transport/wait_progress.h"

namespace plumb::cmd {

class WaitPrinter {
 public:
  /// `tty`: redraw one line; else heartbeat lines every `beat`.
  WaitPrinter(bool tty, std::chrono::seconds beat) : tty_(tty), beat_(beat) {}
  /// The printer for this process's stderr (TTY or not, PLUMB_HEARTBEAT_S).
  static WaitPrinter ForStderr();

  /// Shows one look at a wait (thread-safe).
  void Show(const transport::WaitProgress& p);
  /// Ends a redrawn line before other output (thread-safe; nothing when none is open).
  void Done();
  /// The text Show would print for `p` now, or nullopt when it prints nothing (heartbeat not
  /// due). Exposed for tests; Show writes it to stderr.
  std::optional<std::string> Line(const transport::WaitProgress& p,
                                  std::chrono::steady_clock::time_point now);

 private:
  bool tty_;
  std::chrono::seconds beat_;
  std::mutex mu_;
  bool line_open_ = false;
  std::string last_key_;   // node + what + state: a change prints at once
  std::optional<std::chrono::steady_clock::time_point> last_line_;
};

/// Sets `cancel` on the first SIGINT/SIGTERM; exits 130 on the second. `cancel` must outlive
/// the process's use of signals (a static).
void InstallCancelOnSignals(transport::CancelSignal& cancel);

}  // namespace plumb::cmd
