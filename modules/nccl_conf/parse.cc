#include "modules/nccl_conf/parse.h"

#include "modules/parse_util.h"

namespace plumb::modules::nccl_conf {

bool IsSafeName(std::string_view n) {
  if (n.size() <= 5 || n.size() > 64 || n.substr(0, 5) != "NCCL_") return false;
  for (char c : n)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

bool IsSafeValue(std::string_view v) {
  if (v.empty() || v.size() > 256 || v[0] == '-') return false;
  for (char c : v)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '.' || c == ',' || c == ':' || c == '=' || c == '^' || c == '/' || c == '+' || c == '-'))
      return false;
  return true;
}

Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts) {
  nlohmann::json facts = {{"present", false}, {"values", nlohmann::json::object()}};
  const ProbePart* p = FindPart(parts, "conf");
  if (!p) return ParseError("nccl_conf", "probe", "no 'conf' part");
  if (p->absent()) return facts;
  if (p->exit_status != 0)
    return ParseError("nccl_conf", "cat /etc/nccl.conf",
                      "could not read the file: " + std::string(Trim(p->text.substr(0, 200))));
  facts["present"] = true;
  // A last line without '\n' is a whole line: cat read the whole file (the part's framing
  // says so), and NCCL's getline takes it too.
  for (const Line& line : SplitLines(p->text)) {
    std::string_view t = line.text;
    if (t.empty() || t[0] == '#') continue;
    size_t eq = t.find('=');
    if (eq == std::string_view::npos) continue;   // NCCL ignores it too
    std::string name(t.substr(0, eq));
    if (!facts["values"].contains(name)) facts["values"][name] = std::string(t.substr(eq + 1));
  }
  return facts;
}

}  // namespace plumb::modules::nccl_conf
