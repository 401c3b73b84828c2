#include "cmd/bmc_wait.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "schemas/exit_codes.h"

namespace plumb::cmd {

WaitPrinter WaitPrinter::ForStderr() {
  std::chrono::seconds beat(30);
  if (const char* hb = std::getenv("PLUMB_HEARTBEAT_S"); hb && std::atoi(hb) > 0)
    beat = std::chrono::seconds(std::atoi(hb));
  return WaitPrinter(isatty(2) != 0, beat);
}

std::optional<std::string> WaitPrinter::Line(const transport::WaitProgress& p,
                                             std::chrono::steady_clock::time_point now) {
  std::string text = (p.node.empty() ? "" : p.node + ": ") + "waiting for " + p.Text();
  if (tty_) return text;
  const std::string key = p.node + "\n" + p.what + "\n" + p.state;
  const bool changed = key != last_key_;
  if (!changed && last_line_ && now - *last_line_ < beat_) return std::nullopt;
  last_key_ = key;
  last_line_ = now;
  return text;
}

void WaitPrinter::Show(const transport::WaitProgress& p) {
  std::lock_guard lock(mu_);
  auto line = Line(p, std::chrono::steady_clock::now());
  if (!line) return;
  if (tty_) {
    std::fprintf(stderr, "\r%s\033[K", line->c_str());
    line_open_ = true;
  } else {
    std::fprintf(stderr, "plumb: %s\n", line->c_str());
  }
  std::fflush(stderr);
}

void WaitPrinter::Done() {
  std::lock_guard lock(mu_);
  if (!line_open_) return;
  std::fputs("\n", stderr);
  std::fflush(stderr);
  line_open_ = false;
}

namespace {

transport::CancelSignal* g_bmc_cancel = nullptr;
std::atomic<int> g_bmc_signals{0};
// Looked up before any signal can come: the handler only reads it.
int g_bmc_interrupted_code = 130;

extern "C" void OnBmcSignal(int) {
  if (g_bmc_signals.fetch_add(1) >= 1) _exit(g_bmc_interrupted_code);
  if (g_bmc_cancel) g_bmc_cancel->Set();   // async-signal-safe: an atomic store and one write(2)
}

}  // namespace

void InstallCancelOnSignals(transport::CancelSignal& cancel) {
  g_bmc_cancel = &cancel;
  g_bmc_interrupted_code = ExitCodeFor("*", Outcome::kInterrupted);
  struct sigaction sa {};
  sa.sa_handler = OnBmcSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace plumb::cmd
