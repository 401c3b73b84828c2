#include "inventory/version.h"

#include <cctype>

namespace plumb::inventory {

std::optional<std::vector<long>> ParseDotted(const std::string& v) {
  std::vector<long> out;
  long cur = 0;
  size_t digits = 0;
  for (size_t i = 0; i <= v.size(); ++i) {
    if (i == v.size() || v[i] == '.') {
      if (digits == 0) return std::nullopt;
      out.push_back(cur);
      cur = 0;
      digits = 0;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(v[i])) || digits >= 9) return std::nullopt;
    cur = cur * 10 + (v[i] - '0');
    ++digits;
  }
  return out;
}

int CompareDotted(const std::vector<long>& a, const std::vector<long>& b) {
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    long x = i < a.size() ? a[i] : 0;
    long y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

bool DottedPrefix(const std::vector<long>& prefix, const std::vector<long>& v) {
  if (prefix.size() > v.size()) {
    // "12.4" names 12.4.0 too: allow a longer prefix whose extra parts are zero.
    for (size_t i = v.size(); i < prefix.size(); ++i) {
      if (prefix[i] != 0) return false;
    }
  }
  for (size_t i = 0; i < prefix.size() && i < v.size(); ++i) {
    if (prefix[i] != v[i]) return false;
  }
  return true;
}

std::optional<long> ParseDuration(const std::string& d) {
  if (d.empty()) return std::nullopt;
  long total = 0;
  long cur = 0;
  size_t digits = 0;
  for (char c : d) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (++digits > 7) return std::nullopt;
      cur = cur * 10 + (c - '0');
      continue;
    }
    if (digits == 0) return std::nullopt;
    long unit = c == 's' ? 1 : c == 'm' ? 60 : c == 'h' ? 3600 : c == 'd' ? 86400 : 0;
    if (unit == 0) return std::nullopt;
    total += cur * unit;
    cur = 0;
    digits = 0;
  }
  if (digits != 0) return std::nullopt;  // a number without a unit
  if (total > 366L * 86400) return std::nullopt;
  return total;
}

}  // namespace plumb::inventory
