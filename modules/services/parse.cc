#include "modules/services/parse.h"

#include "modules/parse_util.h"
#include "modules/part_facts.h"

namespace plumb::modules::services {
namespace {

constexpr std::string_view kModule = "services";

bool IsUnitName(std::string_view u) {
  if (u.empty() || u.size() > 256 || u.find('.') == std::string_view::npos) return false;
  for (char c : u) {
    unsigned char b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b >= 0x7f) return false;
  }
  return true;
}

bool IsWord(std::string_view w) {
  if (w.empty() || w.size() > 64) return false;
  for (char c : w)
    if (!((c >= 'a' && c <= 'z') || c == '-' || (c >= '0' && c <= '9'))) return false;
  return true;
}

}  // namespace

Result<std::map<std::string, std::string>> ParseSystemctlShow(std::string_view text) {
  std::map<std::string, std::string> kv;
  for (const Line& line : SplitLines(text)) {
    if (Trim(line.text).empty()) continue;
    size_t eq = line.text.find('=');
    std::string_view key = eq == std::string_view::npos ? std::string_view() : line.text.substr(0, eq);
    bool ok = !key.empty();
    for (char c : key) ok = ok && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
    if (!ok) return ParseError(kModule, "systemctl show", "expected Key=Value", &line);
    kv[std::string(key)] = std::string(line.text.substr(eq + 1));
  }
  return kv;
}

Result<std::map<std::string, std::string>> ParseListUnitFiles(std::string_view text) {
  std::map<std::string, std::string> out;
  bool truncated = false;
  auto lines = SplitLines(text, &truncated);
  for (const Line& line : lines) {
    auto w = SplitWhitespace(line.text);
    if (w.empty()) continue;
    if (truncated && &line == &lines.back())
      return ParseError(kModule, "systemctl list-unit-files", "output cut short", &line);
    if (w.size() < 2 || w.size() > 3 || !IsUnitName(w[0]) || !IsWord(w[1]))
      return ParseError(kModule, "systemctl list-unit-files", "expected UNIT STATE [PRESET]", &line);
    out[std::string(w[0])] = std::string(w[1]);
  }
  return out;
}

Result<std::map<std::string, UnitState>> ParseListUnits(std::string_view text) {
  std::map<std::string, UnitState> out;
  bool truncated = false;
  auto lines = SplitLines(text, &truncated);
  for (const Line& line : lines) {
    std::string_view t = line.text;
    // Without --plain (old systemd) a failed or missing unit starts with a bullet.
    if (StartsWith(Trim(t), "\xe2\x97\x8f")) t = Trim(t).substr(3);
    auto w = SplitWhitespace(t);
    if (w.empty()) continue;
    if (truncated && &line == &lines.back())
      return ParseError(kModule, "systemctl list-units", "output cut short", &line);
    if (w.size() < 4 || !IsUnitName(w[0]) || !IsWord(w[1]) || !IsWord(w[2]) || !IsWord(w[3]))
      return ParseError(kModule, "systemctl list-units", "expected UNIT LOAD ACTIVE SUB", &line);
    out[std::string(w[0])] = UnitState{std::string(w[1]), std::string(w[2]), std::string(w[3])};
  }
  return out;
}

nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts) {
  PartFacts out(kModule, {{"systemd", false}, {"units", nlohmann::json::object()}});
  nlohmann::json& facts = out.facts();
  const ProbePart* files = FindPart(parts, "unit_files");
  const ProbePart* loaded = FindPart(parts, "units");
  if (!files || !loaded) {
    out.Fail(!files ? "unit_files" : "units", ParseError(kModule, "probe", "no 'unit_files'/'units' part"));
    return std::move(out).Finish();
  }
  if (files->absent() || loaded->absent()) return std::move(out).Finish();
  std::map<std::string, std::string> f;
  out.Read("unit_files", [&]() -> Status {
    auto r = ParseListUnitFiles(files->text);
    if (!r.ok()) return r.error();
    f = std::move(*r);
    return OkStatus();
  });
  // list-unit-files reads files and works without a running systemd; list-units needs the
  // manager (containers, chroots): then only the unit-file states are known.
  bool running = !(loaded->exit_status != 0 &&
                   (loaded->text.find("System has not been booted with systemd") != std::string::npos ||
                    StartsWith(loaded->text, "Failed to connect to bus")));
  std::map<std::string, UnitState> u;
  // When list-units cannot be read, units' runtime states stay unknown (null), not "inactive".
  bool states_read = running && out.Read("units", [&]() -> Status {
    auto r = ParseListUnits(loaded->text);
    if (!r.ok()) return r.error();
    u = std::move(*r);
    return OkStatus();
  });
  nlohmann::json& units = facts["units"];
  for (const auto& [name, state] : f)
    units[name] = {{"enabled", state}, {"load", nullptr},
                   {"active", states_read ? nlohmann::json("inactive") : nlohmann::json()},
                   {"sub", states_read ? nlohmann::json("dead") : nlohmann::json()}};
  for (const auto& [name, st] : u) {
    auto& e = units[name];
    if (!e.contains("enabled")) e["enabled"] = nullptr;
    e["load"] = st.load;
    e["active"] = st.active;
    e["sub"] = st.sub;
  }
  facts["systemd"] = running;
  return std::move(out).Finish();
}

}  // namespace plumb::modules::services
