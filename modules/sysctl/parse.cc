#include "modules/sysctl/parse.h"

#include "modules/parse_util.h"

namespace plumb::modules::sysctl {

bool IsSafeKey(std::string_view k) {
  if (k.empty() || k.size() > 256 || k[0] == '-') return false;
  for (char c : k)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '.' || c == '-' || c == '/' || c == '*' || c == '@' || c == ':'))
      return false;
  return true;
}

std::string NormalizeValue(std::string_view v) {
  std::string out;
  for (auto w : SplitWhitespace(v)) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

Result<SysctlValues> ParseSysctlAll(std::string_view text) {
  SysctlValues out;
  bool truncated = false;
  auto lines = SplitLines(text, &truncated);
  for (const Line& line : lines) {
    std::string_view t = line.text;
    if (Trim(t).empty()) continue;
    if (StartsWith(t, "sysctl: permission denied on key '") ||
        StartsWith(t, "sysctl: reading key \"")) {
      std::string_view rest = t.substr(t.find_first_of("'\"") + 1);
      out.unreadable.push_back(std::string(rest.substr(0, rest.find_first_of("'\""))));
      continue;
    }
    size_t eq = t.find(" = ");
    std::string_view key;
    std::string_view value;
    if (eq != std::string_view::npos) {
      key = t.substr(0, eq);
      value = t.substr(eq + 3);
    } else if (EndsWith(t, " =")) {   // empty value: "kernel.domainname = " after trimming
      key = t.substr(0, t.size() - 2);
    }
    if (!IsSafeKey(key)) return ParseError("sysctl", "sysctl -a", "expected 'key = value'", &line);
    if (truncated && &line == &lines.back())
      return ParseError("sysctl", "sysctl -a", "output cut short", &line);
    out.values[std::string(key)] = std::string(value);
  }
  return out;
}

Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts) {
  nlohmann::json facts = {{"values", nlohmann::json::object()}, {"unreadable", nlohmann::json::array()}};
  const ProbePart* p = FindPart(parts, "values");
  if (!p) return ParseError("sysctl", "probe", "no 'values' part");
  if (p->absent()) return facts;
  auto v = ParseSysctlAll(p->text);
  if (!v.ok()) return v.error();
  for (const auto& [k, val] : v->values) facts["values"][k] = val;
  for (const auto& k : v->unreadable) facts["unreadable"].push_back(k);
  return facts;
}

}  // namespace plumb::modules::sysctl
