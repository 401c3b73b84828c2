#include "inventory/node_pattern.h"

#include <fnmatch.h>

#include <algorithm>
#include <optional>

#include "inventory/hostlist.h"

namespace plumb::inventory {
namespace {

// More expansions than this and the term matches nothing (a typo like n[1-99999999] must not
// allocate gigabytes; --limit then says the term matches no node).
constexpr size_t kMaxExpansions = 1'000'000;

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n')) --e;
  return std::string(s.substr(b, e - b));
}

bool HasGlob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

}  // namespace

std::vector<std::string> SplitNodePattern(std::string_view pattern) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : pattern) {
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      if (std::string t = Trim(cur); !t.empty()) out.push_back(std::move(t));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (std::string t = Trim(cur); !t.empty()) out.push_back(std::move(t));
  return out;
}

std::string WhyNoNodeTerm(std::string_view pattern) {
  const std::vector<std::string> terms = SplitNodePattern(pattern);
  if (terms.empty())
    return Trim(pattern).empty() ? "it is empty" : "it holds only commas and blanks";
  for (const std::string& t : terms)
    if (t[0] != '!' || !Trim(std::string_view(t).substr(1)).empty()) return "";
  return "its '!' names nothing to exclude";
}

NodeTerm::NodeTerm(std::string_view term) : text_(term) {
  // Expand each numeric bracket into its alternatives; keep other brackets for fnmatch.
  std::vector<std::string> alts{""};
  size_t i = 0;
  bool too_big = false;   // too many expansions, or a malformed range: matches nothing
  while (i < term.size()) {
    const char c = term[i];
    if (c == '[') {
      size_t close = term.find(']', i + 1);
      if (close != std::string_view::npos) {
        std::string_view body = term.substr(i + 1, close - i - 1);
        size_t budget = alts.empty() ? kMaxExpansions : kMaxExpansions / alts.size();
        // Slurm's ranges (hostlist.h); brackets that are no range list are a glob class
        // such as [a-z] or [!x].
        if (auto nums = ExpandRangeList(body, budget)) {
          std::vector<std::string> next;
          next.reserve(alts.size() * nums->size());
          for (const std::string& a : alts)
            for (const std::string& n : *nums) next.push_back(a + n);
          alts = std::move(next);
        } else if (std::all_of(body.begin(), body.end(), [](char ch) {
                     return (ch >= '0' && ch <= '9') || ch == ',' || ch == '-';
                   })) {
          too_big = true;   // a numeric list, but too big or malformed (3-1)
          break;
        } else {
          for (std::string& a : alts) a.append(term.substr(i, close - i + 1));
        }
        i = close + 1;
        continue;
      }
    }
    for (std::string& a : alts) a += c;
    ++i;
  }
  if (too_big) alts.clear();
  for (std::string& a : alts) {
    if (HasGlob(a)) globs_.push_back(std::move(a));
    else names_.insert(std::move(a));
  }
}

bool NodeTerm::Matches(std::string_view name) const {
  if (names_.count(std::string(name))) return true;
  const std::string n(name);
  for (const std::string& g : globs_)
    if (fnmatch(g.c_str(), n.c_str(), 0) == 0) return true;
  return false;
}

NodePattern::NodePattern(std::string_view pattern) {
  for (std::string& t : SplitNodePattern(pattern)) {
    bool exclude = t[0] == '!';
    std::string text = exclude ? Trim(std::string_view(t).substr(1)) : t;
    if (text.empty()) continue;
    const bool group = text[0] == '@';
    NodeTerm term(group ? std::string_view() : std::string_view(text));
    terms_.push_back({std::move(text), exclude, group, std::move(term)});
  }
}

bool NodePattern::TermMatches(const Term& t, std::string_view name, const GroupTest& in_group) {
  if (t.group) return in_group && in_group(name, std::string_view(t.text).substr(1));
  return t.term.Matches(name);
}

bool NodePattern::Matches(std::string_view name, const GroupTest& in_group) const {
  bool any_include = false, in = false;
  for (const Term& t : terms_) {
    if (t.exclude) continue;
    any_include = true;
    if (TermMatches(t, name, in_group)) {
      in = true;
      break;
    }
  }
  if (!any_include) in = !terms_.empty();
  if (!in) return false;
  for (const Term& t : terms_)
    if (t.exclude && TermMatches(t, name, in_group)) return false;
  return true;
}

}  // namespace plumb::inventory
