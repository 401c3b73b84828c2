#include "plans/report/progress.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace plumb::plans::report {

std::string ProgressDuration(long long ms) {
  long long s = ms / 1000;
  if (s < 60) return fmt::format("{}.{}s", s, (ms % 1000) / 100);
  return fmt::format("{}m{:02}s", s / 60, s % 60);
}

std::optional<std::string> ProgressLine(const RolloutEvent& e) {
  using K = RolloutEvent::Kind;
  switch (e.kind) {
    case K::kRunStart: return fmt::format("run {}: {}", e.run, e.message);
    case K::kBatchStart:
      return fmt::format("batch {}/{}{}: {}", e.batch + 1, e.batches, e.canary ? " (canary)" : "",
                         e.message);
    case K::kStep:
      if (e.status == "start") return std::nullopt;   // the outcome line says it all
      return fmt::format("  {:<10} {:<28} {}{}{}", e.node, e.step, e.status,
                         e.elapsed_ms > 0 ? " in " + ProgressDuration(e.elapsed_ms) : "",
                         e.message.empty() ? "" : ": " + e.message);
    case K::kNodeEnd:
      return fmt::format("  {:<10} => {}{}", e.node, e.status,
                         e.message.empty() ? "" : " (" + e.step + ": " + e.message + ")");
    case K::kBatchEnd: return std::nullopt;
    case K::kRunEnd: return fmt::format("run {} {}: {}", e.run, e.status, e.message);
    case K::kNote:
      if (e.message == "starting" || e.message == "continuing") return std::nullopt;
      return fmt::format("  {} {}", e.node, e.message);
    case K::kWait:
      // The heartbeat (every 30 s): a CI log shows what the run waits for, and since when.
      return fmt::format("  {:<10} {:<28} waiting {}: {}", e.node.empty() ? "-" : e.node, e.step,
                         ProgressDuration(e.elapsed_ms), e.message);
  }
  return std::nullopt;
}

namespace {

std::string Paint(const std::function<std::string(std::string_view)>& f, const std::string& s) {
  return f ? f(s) : s;
}

// Plain lines, one per thing that happened: what CI logs want.
class LineProgress final : public Observer {
 public:
  LineProgress(std::FILE* out, ProgressColors colors) : out_(out), colors_(std::move(colors)) {}
  void OnEvent(const RolloutEvent& e) override {
    std::optional<std::string> line = ProgressLine(e);
    if (!line) return;
    const std::string text = Paint(colors_.line, *line);
    std::lock_guard lock(mu_);
    std::fprintf(out_, "%s\n", text.c_str());
    std::fflush(out_);
  }

 private:
  std::FILE* out_;
  const ProgressColors colors_;
  std::mutex mu_;
};

class JsonProgress final : public Observer {
 public:
  explicit JsonProgress(std::FILE* out) : out_(out) {}
  void OnEvent(const RolloutEvent& e) override {
    std::string s = e.ToJson().dump();
    std::lock_guard lock(mu_);
    std::fprintf(out_, "%s\n", s.c_str());
    std::fflush(out_);
  }

 private:
  std::FILE* out_;
  std::mutex mu_;
};

// A live table on a terminal: one row per node of the current batch, redrawn in place, and
// once a second by a ticker so a long wait shows its elapsed time move.
class TableProgress final : public Observer {
 public:
  TableProgress(std::FILE* out, ProgressColors colors) : out_(out), colors_(std::move(colors)) {
    ticker_ = std::thread([this] {
      std::unique_lock lock(mu_);
      while (!cv_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; }))
        if (drawn_ > 0) Draw(std::chrono::steady_clock::now());
    });
  }
  ~TableProgress() override {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    ticker_.join();
  }
  void OnEvent(const RolloutEvent& e) override {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (e.kind == RolloutEvent::Kind::kRunEnd) {
      Draw(now);
      std::fprintf(out_, "\nrun %s %s: %s\n", e.run.c_str(), Paint(colors_.status, e.status).c_str(),
                   e.message.c_str());
      std::fflush(out_);
      return;
    }
    Take(e, now);
    Draw(now);
  }

 private:
  struct Row {
    std::string step, status, note;
    bool done = false;
    std::chrono::steady_clock::time_point step_since = std::chrono::steady_clock::now();
  };
  Row& RowOf(const std::string& node) {
    if (!rows_.count(node)) order_.push_back(node);
    return rows_[node];
  }
  void Take(const RolloutEvent& e, std::chrono::steady_clock::time_point now) {
    using K = RolloutEvent::Kind;
    switch (e.kind) {
      case K::kRunStart: header_ = fmt::format("run {}: {}", e.run, e.message); break;
      case K::kBatchStart:
        Finish();
        rows_.clear();
        order_.clear();
        batch_ = fmt::format("batch {}/{}{}", e.batch + 1, e.batches, e.canary ? " (canary)" : "");
        started_ = now;
        wait_.clear();
        break;
      case K::kStep: {
        Row& r = RowOf(e.node);
        r.step = e.step;
        r.status = e.status == "start" ? "…" : e.status;
        if (e.status == "start") r.step_since = now;
        if (!e.message.empty()) r.note = e.message;
        wait_.clear();   // something moved: the scheduler answers again
        break;
      }
      case K::kWait:
        if (e.node.empty()) wait_ = e.message;   // the run waits (the scheduler)
        else RowOf(e.node).note = e.message;
        break;
      case K::kNodeEnd: {
        Row& r = RowOf(e.node);
        r.status = e.status;
        r.done = true;
        r.note = e.message;
        break;
      }
      default: break;
    }
  }
  void Finish() {
    drawn_ = 0;
    std::fprintf(out_, "\n");
  }
  std::string RowText(const std::string& n, const Row& r, std::chrono::steady_clock::time_point now) {
    std::string status = r.status;
    if (!r.done && r.status == "…")   // a running step shows how long it has run
      status = ProgressDuration(
          std::chrono::duration_cast<std::chrono::milliseconds>(now - r.step_since).count());
    // Padded before colouring: escape codes have no width on the screen.
    const std::string cell = fmt::format("{:<12}", status);
    return fmt::format("  {:<12} {:<28} {} {}\n", n, r.step,
                       Paint(colors_.status, status) + cell.substr(std::min(cell.size(), status.size())),
                       r.note.substr(0, 80));
  }
  void Draw(std::chrono::steady_clock::time_point now) {
    std::string out;
    if (drawn_ > 0) out += fmt::format("\033[{}A\033[J", drawn_);
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - started_).count();
    out += fmt::format("{}\n{}  elapsed {}s\n", header_, batch_, secs);
    int lines = 2;
    if (!wait_.empty()) {
      out += "  " + wait_.substr(0, 110) + "\n";
      ++lines;
    }
    for (const auto& n : order_) {
      out += RowText(n, rows_[n], now);
      ++lines;
    }
    drawn_ = lines;
    std::fputs(out.c_str(), out_);
    std::fflush(out_);
  }

  std::FILE* out_;
  const ProgressColors colors_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread ticker_;
  std::string header_, batch_, wait_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::map<std::string, Row> rows_;
  std::vector<std::string> order_;
  int drawn_ = 0;
};

}  // namespace

std::unique_ptr<Observer> MakeProgressObserver(ProgressKind kind, std::FILE* out,
                                               ProgressColors colors) {
  switch (kind) {
    case ProgressKind::kJson: return std::make_unique<JsonProgress>(out);
    case ProgressKind::kTable: return std::make_unique<TableProgress>(out, std::move(colors));
    case ProgressKind::kLines: break;
  }
  return std::make_unique<LineProgress>(out, std::move(colors));
}

}  // namespace plumb::plans::report
