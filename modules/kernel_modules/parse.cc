#include "modules/kernel_modules/parse.h"

#include "modules/parse_util.h"

namespace plumb::modules::kernel_modules {

bool IsSafeName(std::string_view s) {
  if (s.empty() || s.size() > 128 || s[0] == '-') return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return false;
  return true;
}

Result<Params> ParseModuleParams(std::string_view text) {
  Params out;
  std::string* last = nullptr;
  for (const Line& line : SplitLines(text)) {
    std::string_view t = line.text;
    if (StartsWith(t, "grep: ")) continue;
    constexpr std::string_view kPrefix = "/sys/module/";
    if (!StartsWith(t, kPrefix)) {
      if (!last) return ParseError("kernel_modules", "/sys/module", "expected /sys/module/<m>/parameters/<p>:<value>", &line);
      *last += "\n";
      *last += t;
      continue;
    }
    std::string_view rest = t.substr(kPrefix.size());
    size_t slash = rest.find('/');
    std::string_view module = rest.substr(0, slash);
    constexpr std::string_view kMid = "/parameters/";
    if (slash == std::string_view::npos || rest.substr(slash, kMid.size()) != kMid)
      return ParseError("kernel_modules", "/sys/module", "expected /sys/module/<m>/parameters/<p>:<value>", &line);
    std::string_view tail = rest.substr(slash + kMid.size());
    size_t colon = tail.find(':');
    std::string_view param = tail.substr(0, colon);
    if (colon == std::string_view::npos || !IsSafeName(module) || !IsSafeName(param))
      return ParseError("kernel_modules", "/sys/module", "bad module or parameter name", &line);
    last = &(out[std::string(module)][std::string(param)] = std::string(tail.substr(colon + 1)));
  }
  return out;
}

Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts) {
  nlohmann::json facts = {{"modules", nlohmann::json::object()}};
  const ProbePart* p = FindPart(parts, "params");
  if (!p) return ParseError("kernel_modules", "probe", "no 'params' part");
  auto params = ParseModuleParams(p->text);
  if (!params.ok()) return params.error();
  for (const auto& [m, ps] : *params)
    for (const auto& [k, v] : ps) facts["modules"][m][k] = v;
  return facts;
}

bool ParamMatches(std::string_view want, std::string_view have) {
  if (want == have) return true;
  auto truthy = [](std::string_view v) { return v == "1" || v == "Y" || v == "y" || v == "true"; };
  auto falsy = [](std::string_view v) { return v == "0" || v == "N" || v == "n" || v == "false"; };
  if (have == "Y") return truthy(want);
  if (have == "N") return falsy(want);
  return false;
}

}  // namespace plumb::modules::kernel_modules
