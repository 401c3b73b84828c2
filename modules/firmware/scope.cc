#include "modules/firmware/scope.h"

#include <algorithm>
#include <cctype>

namespace plumb::modules::firmware {
namespace {

using nlohmann::json;

std::string Norm(std::string s) {
  s = s.substr(0, s.find('?'));
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// `link` is `base` or a resource under it (Systems/Node1/Processors/GPU0 is under Node1).
bool Under(const std::string& link, const std::string& base) {
  std::string l = Norm(link), b = Norm(base);
  return !b.empty() && (l == b || (l.size() > b.size() && l.compare(0, b.size(), b) == 0 &&
                                   l[b.size()] == '/'));
}

bool Belongs(const std::string& link, const SystemRef& s) {
  if (Under(link, s.link)) return true;
  return std::any_of(s.chassis.begin(), s.chassis.end(),
                     [&](const std::string& c) { return Under(link, c); });
}

std::string Str(const json& o, const char* k) {
  return o.is_object() && o.contains(k) && o[k].is_string() ? o[k].get<std::string>() : "";
}

bool Prefixed(const std::string& text, const std::string& id) {
  return !id.empty() && text.size() > id.size() + 1 && text.compare(0, id.size(), id) == 0 &&
         text[id.size()] == '.';
}

}  // namespace

Scoped ScopeOf(const json& member, const SystemsView& view) {
  Scoped out;
  if (member.is_object() && member.contains("RelatedItem") && member["RelatedItem"].is_array()) {
    bool mine = false, theirs = false;
    for (const auto& r : member["RelatedItem"]) {
      std::string link = Str(r, "@odata.id");
      if (link.empty()) continue;
      if (Belongs(link, view.own)) mine = true;
      for (const auto& o : view.others) {
        if (Belongs(link, o)) theirs = true;
      }
    }
    if (mine) return {ItemScope::kOwn, ""};
    if (theirs) return {ItemScope::kOther, ""};
  }
  for (const std::string& text : {Str(member, "Id"), Str(member, "Name")}) {
    if (Prefixed(text, view.own.id)) return {ItemScope::kOwn, text.substr(view.own.id.size() + 1)};
    for (const auto& o : view.others) {
      if (Prefixed(text, o.id)) return {ItemScope::kOther, ""};
    }
  }
  return out;
}

}  // namespace plumb::modules::firmware
