#include "modules/parse_util.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace plumb::modules {

std::vector<Line> SplitLines(std::string_view text, bool* truncated) {
  std::vector<Line> lines;
  int number = 0;
  size_t pos = 0;
  if (truncated) *truncated = false;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line;
    if (nl == std::string_view::npos) {
      line = text.substr(pos);
      pos = text.size();
      if (truncated) *truncated = true;
    } else {
      line = text.substr(pos, nl - pos);
      pos = nl + 1;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(Line{++number, line});
  }
  return lines;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' ||
                        s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::vector<std::string_view> SplitWhitespace(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> out;
  if (sep.empty()) {
    out.push_back(s);
    return out;
  }
  size_t pos = 0;
  while (true) {
    size_t at = s.find(sep, pos);
    if (at == std::string_view::npos) {
      out.push_back(s.substr(pos));
      return out;
    }
    out.push_back(s.substr(pos, at - pos));
    pos = at + sep.size();
  }
}

std::optional<long long> ParseNonNegative(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

namespace {

template <typename T>
std::optional<T> WholeNumber(std::string_view s, size_t max_len) {
  if (s.empty() || s.size() > max_len) return std::nullopt;
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<unsigned long long> ParseUnsigned(std::string_view s) {
  return WholeNumber<unsigned long long>(s, 20);
}

std::optional<long long> ParseSigned(std::string_view s) { return WholeNumber<long long>(s, 20); }

std::optional<double> ParseDouble(std::string_view s) {
  auto v = WholeNumber<double>(s, 40);
  if (v && !std::isfinite(*v)) return std::nullopt;
  return v;
}

std::string Excerpt(std::string_view s, size_t max) {
  std::string out;
  for (char c : s.substr(0, max)) {
    unsigned char u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7f) || c == '\t' ? c : '?';
  }
  if (s.size() > max) out += "...";
  return out;
}

Diagnostic ParseError(std::string_view module, std::string_view tool, std::string_view what,
                      const Line* line) {
  std::string message = line ? fmt::format("{}: {} in line {}: '{}'", tool, what, line->number,
                                           Excerpt(line->text))
                             : fmt::format("{}: {}", tool, what);
  return Diagnostic::Error(fmt::format("probe.{}", module), message);
}

}  // namespace plumb::modules
