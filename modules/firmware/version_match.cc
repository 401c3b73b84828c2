#include "modules/firmware/version_match.h"

#include <array>
#include <cctype>
#include <string_view>

namespace plumb::modules::firmware {
namespace {

std::string_view TrimmedView(std::string_view s) {
  auto ws = [](unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && ws(s.back())) s.remove_suffix(1);
  while (!s.empty() && ws(s.front())) s.remove_prefix(1);
  return s;
}

bool AllDigits(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return false;
  for (size_t i = at; i < at + n; ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// "May 16 2022" / "May 6 2022": an English month abbreviation, a day, a four-digit year.
bool MonthDayYear(std::string_view s) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (s.size() < 10 || s[3] != ' ') return false;
  bool month = false;
  for (std::string_view m : kMonths) month = month || s.substr(0, 3) == m;
  if (!month) return false;
  const size_t day = std::isdigit(static_cast<unsigned char>(s[5])) ? 2 : 1;
  return AllDigits(s, 4, day) && s.size() == 4 + day + 5 && s[4 + day] == ' ' && AllDigits(s, 5 + day, 4);
}

// "(05/19/2022)" or "(2022-05-19)".
bool ParenthesisedDate(std::string_view s) {
  if (s.size() != 12 || s.front() != '(' || s.back() != ')') return false;
  std::string_view d = s.substr(1, 10);
  const bool us = AllDigits(d, 0, 2) && d[2] == '/' && AllDigits(d, 3, 2) && d[5] == '/' && AllDigits(d, 6, 4);
  const bool iso = AllDigits(d, 0, 4) && d[4] == '-' && AllDigits(d, 5, 2) && d[7] == '-' && AllDigits(d, 8, 2);
  return us || iso;
}

bool IsBuildDate(std::string_view s) { return MonthDayYear(s) || ParenthesisedDate(s); }

// Where the trailing build date of `v` starts (at the space before it), or npos.
size_t BuildDateAt(std::string_view v) {
  // The date is the last one or three space-separated words: try both cuts.
  size_t cut = v.size();
  for (int words = 0; words < 3; ++words) {
    cut = v.rfind(' ', cut == 0 ? 0 : cut - 1);
    if (cut == std::string_view::npos || cut == 0) return std::string_view::npos;
    if (IsBuildDate(v.substr(cut + 1)) && v[cut - 1] != ' ') return cut;
  }
  return std::string_view::npos;
}

}  // namespace

std::string VersionWithoutBuildDate(const std::string& reported) {
  std::string_view v = TrimmedView(reported);
  size_t at = BuildDateAt(v);
  return std::string(at == std::string_view::npos ? v : v.substr(0, at));
}

bool VersionMatches(const std::string& pinned, const std::string& reported) {
  std::string_view p = TrimmedView(pinned), v = TrimmedView(reported);
  if (p == v) return true;
  if (p.empty() || v.size() <= p.size() + 1 || v.substr(0, p.size()) != p) return false;
  return BuildDateAt(v) == p.size();
}

}  // namespace plumb::modules::firmware
