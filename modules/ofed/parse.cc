#include "modules/ofed/parse.h"

#include "modules/module_util.h"
#include "modules/parse_util.h"

namespace plumb::modules::ofed {
namespace {

bool IsOfedVersion(std::string_view v) {
  if (v.empty() || v.size() > 40 || !(v[0] >= '0' && v[0] <= '9')) return false;
  for (char c : v)
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-')) return false;
  return true;
}

std::vector<std::string_view> Components(std::string_view v) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= v.size(); ++i) {
    if (i == v.size() || v[i] == '.' || v[i] == '-') {
      out.push_back(v.substr(start, i - start));
      start = i + 1;
    }
  }
  while (!out.empty() && (out.back() == "0" || out.back().empty())) out.pop_back();
  return out;
}

}  // namespace

Result<OfedInfo> ParseOfedInfo(std::string_view text) {
  for (const Line& line : SplitLines(text)) {
    std::string_view t = Trim(line.text);
    if (t.empty()) continue;
    if (EndsWith(t, ":")) t.remove_suffix(1);
    OfedInfo info;
    info.raw = std::string(t);
    for (auto [prefix, flavor] : {std::pair<std::string_view, std::string_view>{"MLNX_OFED_LINUX-", "mlnx_ofed"},
                                  {"OFED-internal-", "doca"}}) {
      if (StartsWith(t, prefix) && IsOfedVersion(t.substr(prefix.size()))) {
        info.version = std::string(t.substr(prefix.size()));
        info.flavor = std::string(flavor);
        return info;
      }
    }
    return ParseError("ofed", "ofed_info -s", "expected MLNX_OFED_LINUX-<version>: or OFED-internal-<version>:", &line);
  }
  return ParseError("ofed", "ofed_info -s", "empty output");
}

bool OfedVersionMatches(std::string_view want, std::string_view have) {
  if (want.empty() || have.empty()) return false;
  return Components(want) == Components(have);
}

Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts) {
  nlohmann::json facts = {{"manager", PackageManagerOf(parts)},
                          {"version", nullptr}, {"flavor", nullptr}, {"raw", nullptr}};
  const ProbePart* p = FindPart(parts, "ofed_info");
  if (!p || p->absent()) return facts;
  auto info = ParseOfedInfo(p->text);
  if (!info.ok()) return info.error();
  facts["version"] = info->version;
  facts["flavor"] = info->flavor;
  facts["raw"] = info->raw;
  return facts;
}

}  // namespace plumb::modules::ofed
