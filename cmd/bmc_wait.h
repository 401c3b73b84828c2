#pragma once
/// How Ctrl-C / SIGTERM end a wait on a BMC (a firmware task, a power state) in `plumb bmc` and
/// `plumb apply`; what the wait shows is plans/report/wait_printer.h.
///
/// The first SIGINT or SIGTERM sets the cancel signal every BMC client waits on (each wait ends
/// within a second or two, the sessions are deleted as the clients close, the verb says what
/// was in flight and exits 130); a second one exits 130 at once.
#include <atomic>

#include "modules/transport/cancel_signal.h"
#include "plans/report/wait_printer.h"

namespace plumb::cmd {

/// The wait printer for this process's stderr (a TTY or not; a heartbeat every 30 s, every
/// PLUMB_HEARTBEAT_S=N s when set).
plans::report::WaitPrinter WaitPrinterForStderr();

/// Sets `stop` (when given) and `cancel` on the first SIGINT/SIGTERM; exits `second_code` (the
/// verb's interrupted code) on the second. Both must outlive the process's use of signals
/// (statics).
void InstallCancelOnSignals(transport::CancelSignal& cancel, std::atomic<bool>* stop,
                            int second_code);

}  // namespace plumb::cmd
