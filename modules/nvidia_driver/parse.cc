#include "modules/nvidia_driver/parse.h"

#include "modules/module_util.h"
#include "modules/parse_util.h"
#include "modules/part_facts.h"
#include "modules/services/parse.h"

namespace plumb::modules::nvidia_driver {
namespace {

constexpr std::string_view kModule = "nvidia_driver";

// A driver version: digits and dots, at least one dot ("550.90.07", "35.3.1", "555.58").
bool IsDriverVersion(std::string_view v) {
  if (v.empty() || v.size() > 32 || v.front() == '.' || v.back() == '.') return false;
  bool dot = false;
  for (char c : v) {
    if (c == '.') dot = true;
    else if (c < '0' || c > '9') return false;
  }
  return dot;
}

}  // namespace

Result<ProcVersion> ParseProcVersion(std::string_view text) {
  auto lines = SplitLines(text);
  if (lines.empty()) return ParseError(kModule, "/proc/driver/nvidia/version", "empty output");
  const Line& first = lines[0];
  if (!StartsWith(first.text, "NVRM version: "))
    return ParseError(kModule, "/proc/driver/nvidia/version", "expected 'NVRM version:'", &first);
  std::string_view rest = first.text.substr(14);
  size_t km = rest.find("Kernel Module");
  if (km == std::string_view::npos)
    return ParseError(kModule, "/proc/driver/nvidia/version", "no 'Kernel Module'", &first);
  ProcVersion pv;
  pv.flavor = rest.find("Open Kernel Module") != std::string_view::npos ? "open" : "proprietary";
  // "Kernel Module  550.90.07  ..." or "Open Kernel Module for x86_64  565.57.01  Release Build"
  int seen = 0;
  for (auto w : SplitWhitespace(rest.substr(km + 13))) {
    if (IsDriverVersion(w)) {
      pv.version = std::string(w);
      return pv;
    }
    if (++seen >= 3) break;
  }
  return ParseError(kModule, "/proc/driver/nvidia/version", "no driver version", &first);
}

// The failures nvidia-smi reports in words, each an NVML state rather than a parse error.
// Matched anywhere in the output: the text is nvidia-smi's own, but other tools' stderr (the
// modprobe that nvidia-modprobe runs when the kernel module is missing) can come first.
const char* SmiFailureState(std::string_view t) {
  if (StartsWith(t, "Failed to initialize NVML: Driver/library version mismatch"))
    return "version-mismatch";
  if (StartsWith(t, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"))
    return "no-driver";
  if (t == "No devices were found") return "no-devices";
  return nullptr;
}

Result<SmiQuery> ParseSmiCsv(std::string_view text) {
  SmiQuery q;
  bool truncated = false;
  auto lines = SplitLines(text, &truncated);
  // A known failure anywhere decides the state; then nothing else is a GPU row.
  for (const Line& line : lines) {
    if (const char* state = SmiFailureState(Trim(line.text))) {
      q.nvml = state;
      break;
    }
  }
  if (q.nvml != "ok") {
    for (const Line& line : lines) {
      std::string_view t = Trim(line.text);
      if (t.empty() || SmiFailureState(t)) continue;
      if (StartsWith(t, "NVML library version:")) {
        q.nvml_library_version = std::string(Trim(t.substr(21)));
        continue;
      }
      if (q.notes.size() < kMaxSmiNotes) q.notes.push_back(Excerpt(t, 200));
    }
    return q;
  }
  for (const Line& line : lines) {
    std::string_view t = Trim(line.text);
    if (t.empty()) continue;
    if (StartsWith(t, "index,")) continue;   // header row (format=csv without noheader)
    if (truncated && &line == &lines.back())
      return ParseError(kModule, "nvidia-smi", "output cut short", &line);
    auto f = Split(t, ", ");
    if (f.size() != 5) return ParseError(kModule, "nvidia-smi", "expected 5 CSV fields", &line);
    auto index = ParseNonNegative(Trim(f[0]));
    if (!index || *index > 4096) return ParseError(kModule, "nvidia-smi", "bad GPU index", &line);
    Gpu g;
    g.index = static_cast<int>(*index);
    g.bus_id = std::string(Trim(f[1]));
    g.name = std::string(Trim(f[2]));
    g.driver_version = std::string(Trim(f[3]));
    if (!IsDriverVersion(g.driver_version))
      return ParseError(kModule, "nvidia-smi", "bad driver version", &line);
    std::string_view pm = Trim(f[4]);
    if (pm == "Enabled") g.persistence_mode = true;
    else if (pm == "Disabled") g.persistence_mode = false;
    else if (pm != "[N/A]" && pm != "N/A" && pm != "[Not Supported]")
      return ParseError(kModule, "nvidia-smi", "bad persistence mode", &line);
    q.gpus.push_back(std::move(g));
  }
  return q;
}

Result<std::optional<std::string>> ParseModinfoVersion(std::string_view text) {
  auto lines = SplitLines(text);
  if (lines.empty()) return ParseError(kModule, "modinfo", "empty output");
  std::string_view t = Trim(lines[0].text);
  if (StartsWith(t, "modinfo: ERROR: Module") && EndsWith(t, "not found."))
    return std::optional<std::string>();
  if (!IsDriverVersion(t) || lines.size() != 1)
    return ParseError(kModule, "modinfo", "expected one driver version", &lines[0]);
  return std::optional<std::string>(std::string(t));
}

Result<std::string> ParseFabricManagerVersion(std::string_view text) {
  for (const Line& line : SplitLines(text)) {
    std::string_view t = Trim(line.text);
    if (t.empty()) continue;
    constexpr std::string_view kPrefix = "Fabric Manager version is";
    if (!StartsWith(t, kPrefix))
      return ParseError(kModule, "nv-fabricmanager", "expected 'Fabric Manager version is'", &line);
    std::string_view v = Trim(t.substr(kPrefix.size()));
    if (!v.empty() && v[0] == ':') v = Trim(v.substr(1));
    if (!IsDriverVersion(v)) return ParseError(kModule, "nv-fabricmanager", "bad version", &line);
    return std::string(v);
  }
  return ParseError(kModule, "nv-fabricmanager", "empty output");
}

nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts) {
  PartFacts out(kModule, {{"manager", PackageManagerOf(parts)},
                          {"loaded_version", nullptr},
                          {"kernel_module", nullptr},
                          {"installed_version", nullptr},
                          {"nvml", "absent"},
                          {"nvml_library_version", nullptr},
                          {"gpus", nlohmann::json::array()},
                          {"persistence_mode", nullptr},
                          {"fabricmanager", {{"version", nullptr}, {"service", nullptr}}}});
  nlohmann::json& facts = out.facts();
  if (const ProbePart* p = FindPart(parts, "proc_version"); p && !p->absent()) {
    out.Read("proc_version", [&]() -> Status {
      auto pv = ParseProcVersion(p->text);
      if (!pv.ok()) return pv.error();
      facts["loaded_version"] = pv->version;
      facts["kernel_module"] = pv->flavor;
      return OkStatus();
    });
  }
  const ProbePart* smi = FindPart(parts, "smi");
  if (smi && smi->exit_status == 124) {
    // nvidia-smi hung (a wedged GPU) and the probe's `timeout` killed it: what it printed so far
    // is not the whole truth.
    facts["nvml"] = "timeout";
  } else if (smi && !smi->absent()) {
    facts["nvml"] = nullptr;   // not read until the part parses
    out.Read("smi", [&]() -> Status {
      auto q = ParseSmiCsv(smi->text);
      if (!q.ok()) return q.error();
      facts["nvml"] = q->nvml;
      // Failed without a message we know: its rows, if any, are not the whole truth.
      if (smi->exit_status != 0 && q->nvml == "ok") facts["nvml"] = "error";
      if (!q->nvml_library_version.empty()) facts["nvml_library_version"] = q->nvml_library_version;
      if (!q->notes.empty()) facts["smi_notes"] = q->notes;
      std::optional<bool> all;
      for (const auto& g : q->gpus) {
        nlohmann::json pm = g.persistence_mode ? nlohmann::json(*g.persistence_mode) : nlohmann::json();
        facts["gpus"].push_back({{"index", g.index}, {"bus_id", g.bus_id}, {"name", g.name},
                                 {"driver_version", g.driver_version}, {"persistence_mode", pm}});
        if (g.persistence_mode) all = all.value_or(true) && *g.persistence_mode;
      }
      if (all) facts["persistence_mode"] = *all;
      return OkStatus();
    });
  }
  // nvidia-smi's view of the loaded driver when /proc did not say (e.g. it was not readable).
  if (facts["loaded_version"].is_null() && !facts["gpus"].empty())
    facts["loaded_version"] = facts["gpus"].front()["driver_version"];
  if (const ProbePart* p = FindPart(parts, "modinfo"); p && !p->absent()) {
    out.Read("modinfo", [&]() -> Status {
      auto v = ParseModinfoVersion(p->text);
      if (!v.ok()) return v.error();
      if (*v) facts["installed_version"] = **v;
      return OkStatus();
    });
  }
  if (const ProbePart* p = FindPart(parts, "fm_version"); p && !p->absent() && p->exit_status == 0) {
    out.Read("fm_version", [&]() -> Status {
      auto v = ParseFabricManagerVersion(p->text);
      if (!v.ok()) return v.error();
      facts["fabricmanager"]["version"] = *v;
      return OkStatus();
    });
  }
  if (const ProbePart* p = FindPart(parts, "fm_service"); p && !p->absent()) {
    out.Read("fm_service", [&]() -> Status {
      auto kv = services::ParseSystemctlShow(p->text);
      if (!kv.ok()) return kv.error();
      auto get = [&](const char* k) -> nlohmann::json {
        auto it = kv->find(k);
        return it == kv->end() || it->second.empty() ? nlohmann::json() : nlohmann::json(it->second);
      };
      facts["fabricmanager"]["service"] = {{"load", get("LoadState")},
                                           {"active", get("ActiveState")},
                                           {"sub", get("SubState")},
                                           {"enabled", get("UnitFileState")}};
      return OkStatus();
    });
  }
  return std::move(out).Finish();
}

}  // namespace plumb::modules::nvidia_driver
