#include "cmd/bmc_wait.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>

#include "schemas/exit_codes.h"

namespace plumb::cmd {

plans::report::WaitPrinter WaitPrinterForStderr() {
  std::chrono::seconds beat(30);
  if (const char* hb = std::getenv("PLUMB_HEARTBEAT_S"); hb && std::atoi(hb) > 0)
    beat = std::chrono::seconds(std::atoi(hb));
  return plans::report::WaitPrinter(stderr, isatty(2) != 0, beat);
}

namespace {

transport::CancelSignal* g_wait_cancel = nullptr;
std::atomic<bool>* g_wait_stop = nullptr;
std::atomic<int> g_wait_signals{0};
// Looked up before any signal can come: the handler only reads it.
int g_wait_interrupted_code = 130;

extern "C" void OnCancelSignal(int) {
  // First: stop starting things, end the waits. Second: leave now (what must be kept, a
  // journal, already holds every intent).
  if (g_wait_signals.fetch_add(1) >= 1) _exit(g_wait_interrupted_code);
  if (g_wait_stop) *g_wait_stop = true;
  if (g_wait_cancel) g_wait_cancel->Set();   // async-signal-safe: an atomic store and one write(2)
}

}  // namespace

void InstallCancelOnSignals(transport::CancelSignal& cancel, std::atomic<bool>* stop,
                            int second_code) {
  g_wait_cancel = &cancel;
  g_wait_stop = stop;
  g_wait_interrupted_code = second_code;
  struct sigaction sa {};
  sa.sa_handler = OnCancelSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace plumb::cmd
