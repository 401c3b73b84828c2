#include "modules/marker/parse.h"

#include "modules/parse_util.h"

namespace plumb::modules::marker {

bool IsCommit(std::string_view s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool IsToken(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '_' || c == ':' || c == '+' || c == '-'))
      return false;
  return true;
}

Result<Marker> ParseMarker(std::string_view text) {
  auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return ParseError("marker", "marker.json", "not a JSON object (cut short or garbled)");
  Marker m;
  for (auto [field, out] : {std::pair<const char*, std::string*>{"commit", &m.commit},
                            {"run", &m.run}, {"time", &m.time}}) {
    auto it = j.find(field);
    if (it == j.end() || !it->is_string())
      return ParseError("marker", "marker.json", std::string("missing string \"") + field + "\"");
    *out = it->get<std::string>();
  }
  if (!IsCommit(m.commit)) return ParseError("marker", "marker.json", "\"commit\" is not a 40-hex SHA");
  if (!IsToken(m.run) || !IsToken(m.time))
    return ParseError("marker", "marker.json", "bad \"run\" or \"time\"");
  return m;
}

Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts) {
  nlohmann::json facts = {{"present", false}, {"commit", nullptr}, {"run", nullptr}, {"time", nullptr}};
  const ProbePart* p = FindPart(parts, "marker");
  if (!p || p->absent()) return facts;
  auto m = ParseMarker(p->text);
  if (!m.ok()) return m.error();
  facts = {{"present", true}, {"commit", m->commit}, {"run", m->run}, {"time", m->time}};
  return facts;
}

}  // namespace plumb::modules::marker
