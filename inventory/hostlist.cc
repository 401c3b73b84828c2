#include "inventory/hostlist.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace plumb::inventory {
namespace {

struct Split {
  std::string prefix;
  std::string digits;   // empty when the name has no numeric suffix
};

Split SplitName(const std::string& name) {
  size_t i = name.size();
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  // A numeric suffix longer than 18 digits does not fit a long long: treat the name as plain.
  if (name.size() - i > 18) i = name.size();
  return {name.substr(0, i), name.substr(i)};
}

std::string Pad(long long n, size_t width) { return fmt::format("{:0{}}", n, width); }

// A number of a range: digits only, and few enough for a long long.
bool RangeNumber(std::string_view s) {
  return !s.empty() && s.size() <= 18 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string CompressHostlist(const std::vector<std::string>& names) {
  // (prefix, width) -> numbers; plain names kept apart. Width is the zero-padded width, or 0
  // for natural numbers. A number without a leading zero joins the widest padded group of its
  // prefix it fits (gpu01..gpu10 is gpu[01-10]); shorter ones stay natural (gpu9 beside gpu009).
  std::map<std::string, std::set<size_t>> padded_widths;   // a set: 100,000 names, few widths
  std::vector<Split> splits;
  splits.reserve(names.size());
  for (const std::string& n : names) {
    splits.push_back(SplitName(n));
    const Split& s = splits.back();
    if (s.digits.size() > 1 && s.digits[0] == '0') padded_widths[s.prefix].insert(s.digits.size());
  }
  std::map<std::pair<std::string, size_t>, std::vector<long long>> groups;
  std::vector<std::string> plain;
  for (size_t i = 0; i < names.size(); ++i) {
    const Split& s = splits[i];
    if (s.digits.empty()) {
      plain.push_back(names[i]);
      continue;
    }
    size_t width = 0;
    if (s.digits.size() > 1 && s.digits[0] == '0') {
      width = s.digits.size();
    } else if (auto it = padded_widths.find(s.prefix); it != padded_widths.end()) {
      for (size_t w : it->second)
        if (w <= s.digits.size()) width = std::max(width, w);
    }
    groups[{s.prefix, width}].push_back(std::stoll(s.digits));
  }
  std::sort(plain.begin(), plain.end());
  plain.erase(std::unique(plain.begin(), plain.end()), plain.end());

  // Each entry is (sort key, text) so plain names and groups interleave by name.
  std::vector<std::pair<std::string, std::string>> parts;
  for (const std::string& p : plain) parts.emplace_back(p, p);
  for (auto& [key, nums] : groups) {
    const auto& [prefix, width] = key;
    std::sort(nums.begin(), nums.end());
    nums.erase(std::unique(nums.begin(), nums.end()), nums.end());
    std::vector<std::string> ranges;
    for (size_t i = 0; i < nums.size();) {
      size_t j = i;
      while (j + 1 < nums.size() && nums[j + 1] == nums[j] + 1) ++j;
      ranges.push_back(i == j ? Pad(nums[i], width)
                              : Pad(nums[i], width) + "-" + Pad(nums[j], width));
      i = j + 1;
    }
    std::string text;
    if (nums.size() == 1) {
      text = prefix + ranges[0];
    } else {
      text = prefix + "[";
      for (size_t r = 0; r < ranges.size(); ++r) text += (r ? "," : "") + ranges[r];
      text += "]";
    }
    parts.emplace_back(prefix + Pad(nums.front(), width), std::move(text));
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "," : "") + parts[i].second;
  return out;
}

std::optional<std::vector<std::string>> ExpandHostlist(const std::string& list,
                                                       size_t max_names) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < list.size()) {
    // One element: prefix[ranges]suffix? up to a top-level comma.
    size_t end = i;
    int depth = 0;
    while (end < list.size() && !(list[end] == ',' && depth == 0)) {
      if (list[end] == '[') ++depth;
      if (list[end] == ']') --depth;
      if (depth < 0 || depth > 1) return std::nullopt;
      ++end;
    }
    if (depth != 0) return std::nullopt;
    std::string elem = list.substr(i, end - i);
    i = end + 1;
    if (elem.empty()) return std::nullopt;
    size_t open = elem.find('[');
    if (open == std::string::npos) {
      if (elem.find(']') != std::string::npos) return std::nullopt;
      out.push_back(elem);
      continue;
    }
    size_t close = elem.find(']', open);
    if (elem.find('[', open + 1) != std::string::npos) return std::nullopt;  // one bracket only
    const std::string prefix = elem.substr(0, open);
    const std::string suffix = elem.substr(close + 1);
    const std::string body = elem.substr(open + 1, close - open - 1);
    auto numbers = ExpandRangeList(body, max_names > out.size() ? max_names - out.size() : 0);
    if (!numbers) return std::nullopt;
    for (const std::string& n : *numbers) out.push_back(prefix + n + suffix);
  }
  return out;
}

std::optional<std::vector<std::string>> ExpandRangeList(std::string_view body, size_t max_names) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= body.size()) {
    size_t comma = body.find(',', p);
    if (comma == std::string_view::npos) comma = body.size();
    const std::string_view range = body.substr(p, comma - p);
    p = comma + 1;
    const size_t dash = range.find('-');
    const std::string_view lo = range.substr(0, dash);
    const std::string_view hi = dash == std::string_view::npos ? lo : range.substr(dash + 1);
    if (!RangeNumber(lo) || !RangeNumber(hi)) return std::nullopt;
    const long long a = std::stoll(std::string(lo)), b = std::stoll(std::string(hi));
    if (b < a || static_cast<unsigned long long>(b - a) + out.size() >= max_names) return std::nullopt;
    for (long long n = a; n <= b; ++n) out.push_back(Pad(n, lo.size()));
  }
  return out;
}

}  // namespace plumb::inventory
