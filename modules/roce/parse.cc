#include "modules/roce/parse.h"

#include <fmt/format.h>

#include "modules/parse_util.h"
#include "modules/part_facts.h"

namespace plumb::modules::roce {
namespace {

constexpr std::string_view kModule = "roce";
constexpr std::string_view kMlnxQos = "mlnx_qos";
constexpr std::string_view kEcnTool = "/sys/class/net/*/ecn";

bool IsFlag(std::string_view s) { return s == "0" || s == "1"; }

// A table row's label: "priority", "enabled", "buffer" (older releases print "priority:").
std::string_view RowLabel(std::string_view word) {
  if (EndsWith(word, ":")) word.remove_suffix(1);
  return word;
}

// The priorities whose flag is set, ascending; nullopt when a priority was not read.
nlohmann::json EnabledPriorities(const std::array<std::optional<bool>, 8>& flags) {
  nlohmann::json out = nlohmann::json::array();
  for (int p = 0; p < 8; ++p) {
    if (!flags[p]) return nullptr;
    if (*flags[p]) out.push_back(p);
  }
  return out;
}

int FlagsRead(const std::array<std::optional<bool>, 8>& flags) {
  int n = 0;
  for (const auto& f : flags) n += f.has_value();
  return n;
}

}  // namespace

bool IsSafeInterface(std::string_view name) {
  if (name.empty() || name.size() > 15 || name[0] == '-' || name[0] == '.') return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '.' || c == '-'))
      return false;
  return true;
}

bool IsNetdevName(std::string_view name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  for (char c : name)
    if (c == '/' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '\0')
      return false;
  return true;
}

Result<Qos> ParseMlnxQos(std::string_view text) {
  std::optional<std::string> trust;
  std::optional<std::vector<int>> pfc;
  bool in_pfc_table = false;
  std::vector<int> columns;   // the "priority" row: which priority each column is
  for (const Line& line : SplitLines(text)) {
    std::string_view body = Trim(line.text);
    if (body.empty()) continue;
    constexpr std::string_view kTrust = "Priority trust state:";
    if (StartsWith(body, kTrust)) {
      std::string_view v = Trim(body.substr(kTrust.size()));
      if (v != "pcp" && v != "dscp" && v != "none")
        return ParseError(kModule, kMlnxQos, "unknown priority trust state", &line);
      trust = std::string(v);
      in_pfc_table = false;
      continue;
    }
    if (body == "PFC configuration:") {
      in_pfc_table = true;
      columns.clear();
      continue;
    }
    if (!in_pfc_table) continue;
    auto words = SplitWhitespace(body);
    std::string_view label = RowLabel(words[0]);
    if (label == "priority") {
      columns.clear();
      unsigned seen = 0;
      for (size_t i = 1; i < words.size(); ++i) {
        auto p = ParseNonNegative(words[i]);
        if (!p || *p > 7 || (seen & (1u << *p))) return ParseError(kModule, kMlnxQos, "bad PFC priority row", &line);
        seen |= 1u << *p;
        columns.push_back(static_cast<int>(*p));
      }
      if (columns.size() != 8) return ParseError(kModule, kMlnxQos, "PFC priority row without 8 priorities", &line);
    } else if (label == "enabled") {
      if (columns.empty()) return ParseError(kModule, kMlnxQos, "PFC enabled row before its priority row", &line);
      if (words.size() != columns.size() + 1) return ParseError(kModule, kMlnxQos, "PFC enabled row without 8 flags", &line);
      std::vector<bool> on(8, false);
      for (size_t i = 1; i < words.size(); ++i) {
        if (!IsFlag(words[i])) return ParseError(kModule, kMlnxQos, "PFC enabled flag is not 0 or 1", &line);
        on[columns[i - 1]] = words[i] == "1";
      }
      pfc.emplace();
      for (int p = 0; p < 8; ++p)
        if (on[p]) pfc->push_back(p);
    } else if (label != "buffer") {
      in_pfc_table = false;   // the table has ended (the tc lines follow it)
    }
  }
  if (!trust) return ParseError(kModule, kMlnxQos, "no 'Priority trust state:' line");
  if (!pfc) return ParseError(kModule, kMlnxQos, "no PFC configuration 'enabled' row");
  return Qos{*trust, *pfc};
}

Result<std::map<std::string, EcnFlags>> ParseEcn(std::string_view text) {
  std::map<std::string, EcnFlags> out;
  constexpr std::string_view kPrefix = "/sys/class/net/";
  constexpr std::string_view kExpected = "expected /sys/class/net/<if>/ecn/roce_(np|rp)/enable/<0-7>:<0|1>";
  for (const Line& line : SplitLines(text)) {
    std::string_view t = line.text;
    if (Trim(t).empty()) continue;
    if (!StartsWith(t, kPrefix)) return ParseError(kModule, kEcnTool, kExpected, &line);
    std::string_view rest = t.substr(kPrefix.size());
    size_t slash = rest.find('/');
    if (slash == 0 || slash == std::string_view::npos) return ParseError(kModule, kEcnTool, kExpected, &line);
    std::string_view iface = rest.substr(0, slash);
    std::string_view tail = rest.substr(slash);
    bool np = StartsWith(tail, "/ecn/roce_np/enable/");
    if (!np && !StartsWith(tail, "/ecn/roce_rp/enable/")) return ParseError(kModule, kEcnTool, kExpected, &line);
    tail.remove_prefix(std::string_view("/ecn/roce_np/enable/").size());
    // "<prio>:<flag>": one digit, a colon, one flag (a file holds "0\n" or "1\n").
    if (tail.size() != 3 || tail[0] < '0' || tail[0] > '7' || tail[1] != ':' || !IsFlag(tail.substr(2)))
      return ParseError(kModule, kEcnTool, kExpected, &line);
    EcnFlags& flags = out[std::string(iface)];
    (np ? flags.np : flags.rp)[tail[0] - '0'] = tail[2] == '1';
  }
  return out;
}

std::map<std::string, std::map<std::string, std::string>> ParsePersisted(std::string_view text) {
  std::map<std::string, std::map<std::string, std::string>> out;
  for (const Line& line : SplitLines(text)) {
    std::string_view t = line.text;
    // "Binary file ... matches" and the like are not a kept line.
    if (!StartsWith(t, kPersistDir) || t.size() <= kPersistDir.size() || t[kPersistDir.size()] != '/') continue;
    t.remove_prefix(kPersistDir.size() + 1);
    size_t colon = t.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view file = t.substr(0, colon), content = t.substr(colon + 1);
    if (!EndsWith(file, ".sh")) continue;
    file.remove_suffix(3);
    size_t dot = file.rfind('.');
    if (dot == std::string_view::npos) continue;
    std::string_view iface = file.substr(0, dot), setting = file.substr(dot + 1);
    if (!IsNetdevName(iface) || (setting != "trust" && setting != "pfc" && setting != "ecn")) continue;
    std::string& text_of = out[std::string(iface)][std::string(setting)];
    if (!text_of.empty()) text_of += '\n';
    text_of += content;
  }
  return out;
}

nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts) {
  PartFacts out(kModule, {{"mlnx_qos", nullptr}, {"restore_unit", nullptr}, {"persisted", nullptr},
                          {"interfaces", nlohmann::json::array()}});
  nlohmann::json& facts = out.facts();
  if (const ProbePart* tool = FindPart(parts, kToolPart))
    facts["mlnx_qos"] = tool->exit_status == 0 && !Trim(tool->text).empty();
  // `systemctl is-enabled` prints nothing on stdout for a unit file that does not exist.
  if (const ProbePart* unit = FindPart(parts, kRestoreUnitPart); unit && !unit->absent()) {
    std::string_view state = Trim(unit->text);
    facts["restore_unit"] = state.empty() ? "not-found" : std::string(state);
  }
  // Every kept file, also a netdev's that is gone (its file would still run at boot).
  if (const ProbePart* p = FindPart(parts, kPersistedPart); p && !p->absent()) {
    nlohmann::json kept = nlohmann::json::object();
    for (const auto& [iface, settings] : ParsePersisted(p->text)) kept[iface] = settings;
    facts["persisted"] = std::move(kept);
  }

  std::vector<std::string> names;
  const ProbePart* list = FindPart(parts, kInterfacesPart);
  if (!list || list->exit_status != 0) {
    out.Fail(kInterfacesPart, ParseError(kModule, "/sys/class/net", "the netdev list was not read"));
    return std::move(out).Finish();
  }
  for (const Line& line : SplitLines(list->text)) {
    if (line.text.empty()) continue;
    if (!IsNetdevName(line.text)) {
      // The list is sysfs directory names, which no netdev name can break: the output is not it.
      out.Fail(kInterfacesPart, ParseError(kModule, "/sys/class/net", "not a netdev name", &line));
      return std::move(out).Finish();
    }
    names.emplace_back(line.text);
  }

  std::map<std::string, EcnFlags> ecn;
  if (const ProbePart* e = FindPart(parts, kEcnPart); e && !e->absent()) {
    out.Read(kEcnPart, [&]() -> Status {
      auto r = ParseEcn(e->text);
      if (!r.ok()) return r.error();
      ecn = std::move(*r);
      return OkStatus();
    });
  }

  for (const std::string& name : names) {
    nlohmann::json iface = {{"name", name}, {"trust", nullptr}, {"pfc", nullptr},
                            {"ecn_np", nullptr}, {"ecn_rp", nullptr}};
    std::string part = std::string(kQosPartPrefix) + name;
    const ProbePart* q = FindPart(parts, part);
    // Absent: mlnx_qos is not installed ("mlnx_qos" says so); trust and PFC stay unread.
    if (q && !q->absent()) {
      if (q->exit_status != 0) {
        std::string first = SplitLines(q->text).empty() ? "" : std::string(SplitLines(q->text).front().text);
        out.Fail(part, ParseError(kModule, kMlnxQos,
                                  fmt::format("-i {} exited {}: '{}'", name, q->exit_status, Excerpt(first))));
      } else {
        out.Read(part, [&]() -> Status {
          auto r = ParseMlnxQos(q->text);
          if (!r.ok()) return r.error();
          iface["trust"] = r->trust;
          iface["pfc"] = r->pfc;
          return OkStatus();
        });
      }
    }
    if (auto e = ecn.find(name); e != ecn.end()) {
      // A netdev shows all eight files of a protocol or none (no MLNX_OFED ECN sysfs); some of
      // them only means the read was cut short, so no flag is guessed.
      for (auto [key, flags] : {std::pair{"ecn_np", &e->second.np}, std::pair{"ecn_rp", &e->second.rp}}) {
        int read = FlagsRead(*flags);
        if (read == 8) iface[key] = EnabledPriorities(*flags);
        else if (read > 0)
          out.Fail(kEcnPart, ParseError(kModule, kEcnTool, fmt::format("{}: {} of the 8 roce_{}/enable files read",
                                                                       name, read, std::string_view(key).substr(4))));
      }
    }
    facts["interfaces"].push_back(std::move(iface));
  }
  return std::move(out).Finish();
}

}  // namespace plumb::modules::roce
