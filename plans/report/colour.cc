// Terminal colour for text reports (plans/report/colour.h).
#include "plans/report/colour.h"

#include <cctype>

namespace plumb::plans::report {

namespace {

constexpr std::string_view kRed = "\033[31m", kGreen = "\033[32m", kYellow = "\033[33m",
                           kBold = "\033[1m", kReset = "\033[0m";

std::string Painted(std::string_view text, std::string_view colour) {
  return std::string(colour) + std::string(text) + std::string(kReset);
}

// Words coloured wherever they stand in a line (whole words: "failed", not "unfailed").
struct ColouredWord {
  std::string_view text, colour;
};
constexpr ColouredWord kColouredWords[] = {
    {"FAIL", kRed},        {"FAILED", kRed},   {"failed", kRed},      {"error:", kRed},
    {"DRIFT", kRed},       {"WARN", kYellow},  {"warning:", kYellow}, {"waiting", kYellow},
    {"PARTIAL", kYellow},  {"IN SYNC", kGreen}, {"PASS", kGreen},
};

bool WordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string PaintWords(std::string_view line) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    const ColouredWord* hit = nullptr;
    if (i == 0 || !WordChar(line[i - 1]))
      for (const ColouredWord& w : kColouredWords)
        if (line.substr(i, w.text.size()) == w.text &&
            (i + w.text.size() == line.size() || !WordChar(line[i + w.text.size()]) ||
             !WordChar(w.text.back()))) {
          hit = &w;
          break;
        }
    if (hit != nullptr) {
      out += Painted(hit->text, hit->colour);
      i += hit->text.size();
    } else {
      out += line[i++];
    }
  }
  return out;
}

// A change line: its first non-blank character is a marker followed by a space.
std::string_view MarkerColour(std::string_view line) {
  const size_t at = line.find_first_not_of(' ');
  if (at == std::string_view::npos || at + 1 >= line.size() || line[at + 1] != ' ') return {};
  switch (line[at]) {
    case '+': return kGreen;
    case '~': return kYellow;
    case '-': return kRed;
    default: return {};
  }
}

}  // namespace

bool TerminalDraws(bool is_terminal, const char* term) {
  return is_terminal && !(term != nullptr && std::string_view(term) == "dumb");
}

bool ColourWanted(std::string_view mode, const char* no_color, bool stream_draws) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  if (no_color != nullptr && *no_color != '\0') return false;
  return stream_draws;
}

std::string ColorizeReport(std::string_view text, bool on) {
  if (!on) return std::string(text);
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    const bool newline = end != std::string_view::npos;
    if (!newline) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    if (std::string_view c = MarkerColour(line); !c.empty()) out += Painted(line, c);
    else if (line.rfind("Plan:", 0) == 0 || line.rfind("Verdict:", 0) == 0)
      out += std::string(kBold) + PaintWords(line) + std::string(kReset);
    else out += PaintWords(line);
    if (newline) out += '\n';
    start = end + 1;
  }
  return out;
}

std::string ColorizeStatus(std::string_view status, bool on) {
  if (!on) return std::string(status);
  if (status == "ok" || status == "done" || status == "in-sync") return Painted(status, kGreen);
  if (status == "failed" || status == "error" || status == "timeout") return Painted(status, kRed);
  if (status == "waiting" || status == "wait" || status == "skipped") return Painted(status, kYellow);
  return std::string(status);
}

std::function<std::string(std::string)> ReportStyle(bool on) {
  return [on](std::string text) { return ColorizeReport(text, on); };
}

}  // namespace plumb::plans::report
