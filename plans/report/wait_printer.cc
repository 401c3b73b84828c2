#include "plans/report/wait_printer.h"

namespace plumb::plans::report {

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
    std::fprintf(out_, "\r%s\033[K", line->c_str());
    line_open_ = true;
  } else {
    std::fprintf(out_, "plumb: %s\n", line->c_str());
  }
  std::fflush(out_);
}

void WaitPrinter::Done() {
  std::lock_guard lock(mu_);
  if (!line_open_) return;
  std::fputs("\n", out_);
  std::fflush(out_);
  line_open_ = false;
}

}  // namespace plumb::plans::report
