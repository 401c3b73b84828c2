#include "plans/report/rows.h"

#include "plans/plan/keys.h"
#include "plans/report/drift_render.h"   // ShowValue

namespace plumb::plans::report {

std::string MemberOf(const modules::Action& a) {
  auto m = a.params.find("member");
  return m != a.params.end() && m->is_string() ? m->get<std::string>() : std::string();
}

std::string WhyOf(const modules::Action& a) {
  if (auto g = a.params.find("gaps"); g != a.params.end() && g->is_array() && !g->empty()) {
    std::string out;
    for (const auto& x : *g)
      if (x.is_string()) out += (out.empty() ? "" : "; ") + x.get<std::string>();
    if (!out.empty()) return out;
  }
  if (ShowValue(a.before) == ShowValue(a.after)) return a.summary;
  return {};
}

std::vector<ChangeRow> RowsOf(const modules::Action& a) {
  const std::string key = a.key.empty() ? schemas::PointerToKey(a.pointer) : a.key;
  // A map of members (BIOS attributes): a row per member it sets. Not a map of settings that
  // hold together for one thing (an unread CA's whole pin): then `before` is no map.
  if (a.after.is_object() && !a.after.empty() && a.before.is_object()) {
    std::vector<ChangeRow> rows;
    for (const auto& [k, v] : a.after.items()) {
      auto b = a.before.find(k);
      ChangeRow r{key + "." + k, MemberOf(a), b == a.before.end() ? nlohmann::json() : *b, v, {}};
      if (ShowValue(r.before) == ShowValue(r.after)) r.why = a.summary;
      rows.push_back(std::move(r));
    }
    return rows;
  }
  return {{key, MemberOf(a), a.before, a.after, WhyOf(a)}};
}

std::string RowName(const std::string& key, const std::string& member) {
  return member.empty() ? key : key + " [" + member + "]";
}

}  // namespace plumb::plans::report
