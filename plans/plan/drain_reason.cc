#include "plans/plan/drain_reason.h"

#include <fmt/format.h>

namespace plumb::plans {
namespace {

// Slurm keeps reasons short in its listings; the journal has the whole error.
constexpr size_t kMaxReason = 200;

std::string Clean(std::string r) {
  for (char& c : r)
    if (c == '"' || c == '\'' || c == '\n' || c == '\r' || c == '\\' || c == '`' || c == '$')
      c = ' ';
  if (r.size() > kMaxReason) r = r.substr(0, kMaxReason - 3) + "...";
  return r;
}

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string DrainReason(const std::string& run, const std::string& step) {
  return Clean("plumb:" + run + ":" + step);
}

std::string LastMeaningfulLine(std::string_view error) {
  std::string_view best;
  size_t start = 0;
  while (start <= error.size()) {
    size_t nl = error.find('\n', start);
    if (nl == std::string_view::npos) nl = error.size();
    std::string_view line = TrimView(error.substr(start, nl - start));
    start = nl + 1;
    // "'apt-get install ...' exited 100: E: ..." (modules/apply_util): what follows the
    // command is the tool's own word; the command line is in the journal.
    if (!line.empty() && line.front() == '\'') {
      if (size_t ex = line.find("' exited "); ex != std::string_view::npos) {
        size_t colon = line.find(": ", ex);
        line = colon == std::string_view::npos ? std::string_view() : TrimView(line.substr(colon + 2));
      }
    }
    if (!line.empty()) best = line;
    if (nl == error.size()) break;
  }
  return std::string(best.empty() ? TrimView(error) : best);
}

std::string FailureReason(const std::string& run, const std::string& step,
                          const std::string& error) {
  return Clean(fmt::format("plumb:{}:failed:{}: {}", run, step, LastMeaningfulLine(error)));
}

std::string RunOfReason(std::string_view reason) {
  auto p = ParsePlumbReason(reason);
  return p ? p->run : std::string();
}

std::optional<PlumbReason> ParsePlumbReason(std::string_view reason) {
  if (reason.substr(0, 6) != "plumb:") return std::nullopt;
  std::string_view rest = reason.substr(6);
  size_t colon = rest.find(':');
  PlumbReason r;
  r.run = std::string(rest.substr(0, colon));
  // Slurm may append " [user@time]" in some listings.
  if (auto sp = r.run.find(' '); sp != std::string::npos) r.run.resize(sp);
  if (r.run.empty()) return std::nullopt;
  if (colon == std::string_view::npos) return r;
  rest = rest.substr(colon + 1);
  if (rest.substr(0, 7) == "failed:") {
    r.failed = true;
    rest = rest.substr(7);
    size_t sep = rest.find(": ");
    r.step = std::string(rest.substr(0, sep));
    if (sep != std::string_view::npos) r.error = std::string(rest.substr(sep + 2));
  } else {
    r.step = std::string(rest.substr(0, rest.find(' ')));
  }
  return r;
}

}  // namespace plumb::plans
