#include "modules/os/parse.h"

#include "modules/parse_util.h"

namespace plumb::modules::os {
namespace {

bool IsKey(std::string_view k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return !(k[0] >= '0' && k[0] <= '9');
}

}  // namespace

Result<std::map<std::string, std::string>> ParseOsRelease(std::string_view text) {
  std::map<std::string, std::string> out;
  for (const Line& line : SplitLines(text)) {
    std::string_view t = Trim(line.text);
    if (t.empty() || t[0] == '#') continue;
    size_t eq = t.find('=');
    if (eq == std::string_view::npos || !IsKey(t.substr(0, eq)))
      return ParseError("os", "/etc/os-release", "expected KEY=VALUE", &line);
    std::string_view raw = t.substr(eq + 1);
    std::string value;
    if (!raw.empty() && (raw[0] == '"' || raw[0] == '\'')) {
      char q = raw[0];
      size_t i = 1;
      bool closed = false;
      for (; i < raw.size(); ++i) {
        if (q == '"' && raw[i] == '\\' && i + 1 < raw.size()) {
          value += raw[++i];
        } else if (raw[i] == q) {
          closed = true;
          ++i;
          break;
        } else {
          value += raw[i];
        }
      }
      if (!closed) return ParseError("os", "/etc/os-release", "unterminated quote", &line);
      if (!Trim(raw.substr(i)).empty())
        return ParseError("os", "/etc/os-release", "text after closing quote", &line);
    } else {
      for (char c : raw)
        if (c == ' ' || c == '"' || c == '\'' || c == '`' || c == '$' ||
            static_cast<unsigned char>(c) < 0x20)
          return ParseError("os", "/etc/os-release", "unquoted value with special characters", &line);
      value = std::string(raw);
    }
    out[std::string(t.substr(0, eq))] = std::move(value);
  }
  return out;
}

Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts) {
  const ProbePart* p = FindPart(parts, "os_release");
  if (!p) return ParseError("os", "probe", "no 'os_release' part");
  if (p->absent())
    return nlohmann::json{{"id", nullptr}, {"version_id", nullptr}, {"pretty_name", nullptr},
                          {"id_like", nlohmann::json::array()}, {"family", "unknown"}};
  auto kv = ParseOsRelease(p->text);
  if (!kv.ok()) return kv.error();
  auto get = [&](const char* k) -> nlohmann::json {
    auto it = kv->find(k);
    return it == kv->end() ? nlohmann::json() : nlohmann::json(it->second);
  };
  nlohmann::json like = nlohmann::json::array();
  std::string family = "unknown";
  std::vector<std::string> ids;
  if (auto it = kv->find("ID"); it != kv->end()) ids.push_back(it->second);
  if (auto it = kv->find("ID_LIKE"); it != kv->end())
    for (auto w : SplitWhitespace(it->second)) {
      like.push_back(std::string(w));
      ids.push_back(std::string(w));
    }
  for (const auto& id : ids) {
    if (family != "unknown") break;
    if (id == "debian" || id == "ubuntu") family = "debian";
    else if (id == "rhel" || id == "fedora" || id == "centos" || id == "rocky" || id == "almalinux")
      family = "rhel";
    else if (id == "suse" || id == "sles" || id == "opensuse") family = "suse";
  }
  return nlohmann::json{{"id", get("ID")},
                        {"version_id", get("VERSION_ID")},
                        {"pretty_name", get("PRETTY_NAME")},
                        {"id_like", like},
                        {"family", family}};
}

}  // namespace plumb::modules::os
