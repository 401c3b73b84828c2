#include "schemas/suggest.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace plumb::schemas {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                  std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  size_t limit = std::max<size_t>(2, word.size() / 3);
  std::string best;
  size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string SuggestHint(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best = DidYouMean(word, candidates);
  if (!best.empty()) return fmt::format("did you mean '{}'?", best);
  if (candidates.empty()) return {};
  std::string list;
  for (const auto& c : candidates) list += (list.empty() ? "" : ", ") + c;
  return fmt::format("expected one of: {}", list);
}

std::string Printable(const std::string& s, size_t max) {
  std::string out;
  size_t shown = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (shown == max) {
      out += "...";
      break;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    ++shown;
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      // Decode one UTF-8 sequence to name the code point (look-alikes like U+037E).
      int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
      uint32_t cp = len == 4 ? c & 0x07 : len == 3 ? c & 0x0f : len == 2 ? c & 0x1f : c;
      bool ok = len > 1 && i + len <= s.size();
      for (int k = 1; ok && k < len; ++k) {
        unsigned char cc = static_cast<unsigned char>(s[i + k]);
        if ((cc & 0xc0) != 0x80) ok = false;
        cp = (cp << 6) | (cc & 0x3f);
      }
      if (ok) {
        out += fmt::format("<U+{:04X}>", cp);
        i += len - 1;
      } else {
        out += fmt::format("\\x{:02x}", c);
      }
    }
  }
  return out;
}

}  // namespace plumb::schemas
