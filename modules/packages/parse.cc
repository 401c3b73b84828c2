#include "modules/packages/parse.h"

#include "modules/module_util.h"
#include "modules/parse_util.h"

namespace plumb::modules::packages {
namespace {

bool IsPackageName(std::string_view n) {
  if (n.empty() || n.size() > 200) return false;
  for (char c : n)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '+' || c == '-' || c == '_' || c == ':'))
      return false;
  return true;
}

bool IsVersion(std::string_view v) {
  if (v.empty() || v.size() > 200) return false;
  for (char c : v)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '+' || c == '-' || c == '_' || c == ':' || c == '~' || c == '^'))
      return false;
  return true;
}

}  // namespace

Result<std::vector<Package>> ParseDpkgQuery(std::string_view text, std::string_view module) {
  std::vector<Package> out;
  bool truncated = false;
  auto lines = SplitLines(text, &truncated);
  for (const Line& line : lines) {
    if (line.text.empty()) continue;
    if (StartsWith(line.text, "dpkg-query: no packages found matching")) continue;
    if (StartsWith(line.text, "dpkg-query: error"))
      return ParseError(module, "dpkg-query", "dpkg-query failed", &line);
    if (truncated && &line == &lines.back())
      return ParseError(module, "dpkg-query", "output cut short", &line);
    auto f = Split(line.text, "\t");
    if (f.size() != 3 || !IsPackageName(f[0]) || f[2].size() < 2)
      return ParseError(module, "dpkg-query", "expected NAME<TAB>VERSION<TAB>STATUS", &line);
    Package p;
    p.name = std::string(f[0]);
    p.version = std::string(f[1]);
    char want = f[2][0], state = f[2][1];
    if (std::string_view("uihrp").find(want) == std::string_view::npos ||
        std::string_view("ncHUFWti").find(state) == std::string_view::npos)
      return ParseError(module, "dpkg-query", "unknown package status", &line);
    p.held = want == 'h';
    // Installed means unpacked and configured (or half-way but present): "ii", "hi", also
    // triggers-pending/awaited. "rc" (config files only) and "un" are not installed.
    p.installed = state == 'i' || state == 't' || state == 'W';
    if (p.installed && !IsVersion(p.version))
      return ParseError(module, "dpkg-query", "bad version", &line);
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<Package>> ParseRpmQuery(std::string_view text, std::string_view module) {
  std::vector<Package> out;
  bool truncated = false;
  auto lines = SplitLines(text, &truncated);
  for (const Line& line : lines) {
    if (line.text.empty()) continue;
    if (StartsWith(line.text, "package ") && EndsWith(line.text, " is not installed")) continue;
    if (StartsWith(line.text, "error:"))
      return ParseError(module, "rpm", "rpm failed", &line);
    if (truncated && &line == &lines.back())
      return ParseError(module, "rpm", "output cut short", &line);
    auto f = Split(line.text, "\t");
    if (f.size() != 4 || !IsPackageName(f[0]) || !IsVersion(f[2]))
      return ParseError(module, "rpm", "expected NAME<TAB>EPOCH<TAB>VERSION-RELEASE<TAB>ARCH", &line);
    Package p;
    p.name = std::string(f[0]);
    if (f[1] == "(none)" || f[1].empty()) {
      p.version = std::string(f[2]);
    } else if (ParseNonNegative(f[1])) {
      p.version = std::string(f[1]) + ":" + std::string(f[2]);
    } else {
      return ParseError(module, "rpm", "bad epoch", &line);
    }
    p.arch = std::string(f[3]);
    out.push_back(std::move(p));
  }
  return out;
}

nlohmann::json PackagesJson(const std::vector<Package>& pkgs) {
  nlohmann::json map = nlohmann::json::object();
  for (const auto& p : pkgs) {
    if (!p.installed) continue;
    auto it = map.find(p.name);
    if (it == map.end()) {
      map[p.name] = {{"version", p.version}, {"held", p.held}};
    } else {
      auto& e = *it;
      if (!e.contains("versions")) e["versions"] = nlohmann::json::array({e["version"]});
      e["versions"].push_back(p.version);
      e["version"] = p.version;
      e["held"] = e["held"].get<bool>() || p.held;
    }
  }
  return map;
}

Result<std::vector<VersionLock>> ParseVersionlockList(std::string_view text) {
  std::vector<VersionLock> out;
  for (const Line& line : SplitLines(text)) {
    std::string_view t = Trim(line.text);
    if (t.empty() || t[0] == '#' || StartsWith(t, "Last metadata expiration check")) continue;
    VersionLock l;
    if (t[0] == '!') {
      l.exclude = true;
      t.remove_prefix(1);
    }
    // the arch: ".*" as the plugin writes it, or one arch
    size_t dot = t.rfind('.');
    if (dot == std::string_view::npos) return ParseError("packages", "dnf versionlock list", "no .* or .arch", &line);
    t = t.substr(0, dot);
    size_t colon = t.find(':');
    size_t dash = colon == std::string_view::npos ? colon : t.rfind('-', colon);
    bool epoch_ok = dash != std::string_view::npos && dash + 1 < colon;
    for (size_t i = dash + 1; epoch_ok && i < colon; ++i) epoch_ok = t[i] >= '0' && t[i] <= '9';
    std::string_view vr = epoch_ok ? t.substr(colon + 1) : std::string_view();
    size_t rel = vr.rfind('-');
    if (!epoch_ok || dash == 0 || rel == std::string_view::npos || rel == 0 || rel + 1 == vr.size())
      return ParseError("packages", "dnf versionlock list", "not NAME-EPOCH:VERSION-RELEASE", &line);
    l.name = std::string(t.substr(0, dash));
    l.evr = std::string(t.substr(dash + 1));
    out.push_back(std::move(l));
  }
  return out;
}

Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts) {
  std::string manager = PackageManagerOf(parts);
  nlohmann::json facts = {{"manager", manager}, {"packages", nlohmann::json::object()}};
  const ProbePart* list = FindPart(parts, "list");
  if (!list || manager == "none") return facts;
  auto pkgs = manager == "rpm" ? ParseRpmQuery(list->text) : ParseDpkgQuery(list->text);
  if (!pkgs.ok()) return pkgs.error();
  if (pkgs->empty() && list->exit_status != 0)
    return ParseError("packages", manager == "rpm" ? "rpm" : "dpkg-query",
                      "no packages listed and a non-zero exit status");
  facts["packages"] = PackagesJson(*pkgs);
  if (const ProbePart* locks = FindPart(parts, "locks"); locks && manager == "rpm" && !locks->absent()) {
    auto list = ParseVersionlockList(locks->text);
    if (!list.ok()) return list.error();
    for (const VersionLock& l : *list) {
      auto it = facts["packages"].find(l.name);
      if (l.exclude || it == facts["packages"].end()) continue;
      // an install-only package (kernel) is held when the lock names any installed version
      bool match = VersionMatches("rpm", l.evr, (*it)["version"].get<std::string>());
      for (const auto& v : it->value("versions", nlohmann::json::array()))
        match = match || VersionMatches("rpm", l.evr, v.get<std::string>());
      if (match) (*it)["held"] = true;
    }
  }
  return facts;
}

bool VersionMatches(std::string_view manager, std::string_view want, std::string_view have) {
  auto strip0 = [](std::string_view v) { return StartsWith(v, "0:") ? v.substr(2) : v; };
  want = strip0(want);
  have = strip0(have);
  if (want == have) return true;
  if (manager != "rpm") return false;
  // rpm: "3.3.7-1" matches "1:3.3.7-1" and "3.3.7" matches "3.3.7-1.el9" — dnf resolves
  // name-version the same way when installing.
  if (want.find(':') == std::string_view::npos) {
    size_t colon = have.find(':');
    if (colon != std::string_view::npos) have = have.substr(colon + 1);
    if (want == have) return true;
  }
  if (want.find('-') == std::string_view::npos) {
    size_t dash = have.rfind('-');
    if (dash != std::string_view::npos && have.substr(0, dash) == want) return true;
  }
  return false;
}

}  // namespace plumb::modules::packages
