#include "modules/gpu_health/parse.h"

#include <cctype>

#include <fmt/format.h>

#include "modules/nvidia_driver/parse.h"
#include "modules/parse_util.h"
#include "modules/part_facts.h"

namespace plumb::modules::gpu_health {
namespace {

using nlohmann::json;

constexpr std::string_view kModule = "gpu_health";
constexpr std::string_view kSmi = "nvidia-smi";
constexpr std::string_view kLog = "kernel log";
constexpr size_t kFields = 9;

// The field names of kHealthQueryFields, for `unavailable` and messages.
constexpr std::string_view kFieldNames[kFields] = {
    "index", "pci.bus_id", "ecc.mode.current", "ecc.errors.uncorrected.volatile.total",
    "ecc.errors.uncorrected.aggregate.total", "retired_pages.pending", "remapped_rows.pending",
    "remapped_rows.failure", "clocks_throttle_reasons.active"};

// The header `--format=csv` prints for kHealthQueryFields. Drivers 535 and later name the
// clock reasons "clocks_event_reasons" there, though asked for "clocks_throttle_reasons"
// (both names are accepted in a query); older ones echo the name asked for.
bool IsHealthHeader(std::string_view line) {
  auto f = Split(line, ",");
  if (f.size() != kFields) return false;
  for (size_t i = 0; i < kFields; ++i) {
    std::string_view name = Trim(f[i]);
    if (name == kFieldNames[i]) continue;
    if (i == kFields - 1 && name == "clocks_event_reasons.active") continue;
    return false;
  }
  return true;
}

// nvidia-smi's words for "no value": "[N/A]" (CSV), "N/A" (older drivers), "[Not Supported]".
bool NotAvailable(std::string_view v) { return v == "[N/A]" || v == "N/A" || v == "[Not Supported]"; }
bool Bracketed(std::string_view v) { return v.size() >= 2 && v.front() == '[' && v.back() == ']'; }

// A field that is absent for a reason: true if it was, and `unavailable` notes the unusual ones.
bool Unavailable(std::string_view v, size_t field, GpuHealth* g) {
  if (NotAvailable(v)) return true;
  if (Bracketed(v)) {
    g->unavailable[std::string(kFieldNames[field])] = std::string(v);
    return true;
  }
  return false;
}

std::optional<uint64_t> ParseHex(std::string_view s) {
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return std::nullopt;
  uint64_t v = 0;
  for (char c : s.substr(2)) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return std::nullopt;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  return v;
}

std::string HexMask(uint64_t v) { return fmt::format("0x{:016X}", v); }

// "0000:5d:00" (domain:bus:device) -> "00000000:5D:00.0", nvidia-smi's pci.bus_id.
std::string BusIdOf(std::string_view pci) {
  auto parts = Split(pci, ":");
  if (parts.size() != 3) return {};
  auto hex = [](std::string_view s, size_t max) {
    if (s.empty() || s.size() > max) return false;
    for (char c : s)
      if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    return true;
  };
  if (!hex(parts[0], 8) || !hex(parts[1], 2) || !hex(parts[2], 2)) return {};
  std::string out(8 - parts[0].size(), '0');
  for (auto p : {parts[0], std::string_view(":"), parts[1], std::string_view(":"), parts[2]})
    for (char c : p) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out + ".0";
}

// The log could not be read at all: an error, never "no XIDs".
bool UnreadableLog(std::string_view t) {
  return StartsWith(t, "dmesg: read kernel buffer failed") || t == "No journal files were found." ||
         StartsWith(t, "Hint: You are currently not seeing messages from other users and the system");
}

// A value up to the next ", " (pid=..., name=...), consumed from `rest`.
std::string_view TakeField(std::string_view* rest) {
  size_t comma = rest->find(", ");
  std::string_view v = rest->substr(0, comma);
  *rest = comma == std::string_view::npos ? std::string_view() : rest->substr(comma + 2);
  return v;
}

bool Killed(int status) { return status == 124 || (status > 128 && status <= 192); }

}  // namespace

std::vector<std::string> ThrottleReasonNames(uint64_t mask) {
  static constexpr std::string_view kNames[] = {
      "gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost",
      "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "display_clock_setting"};
  std::vector<std::string> out;
  for (int bit = 0; bit < 64; ++bit) {
    if (!(mask & (uint64_t{1} << bit))) continue;
    if (bit < static_cast<int>(std::size(kNames))) out.emplace_back(kNames[bit]);
    else out.push_back(fmt::format("unknown_0x{:x}", uint64_t{1} << bit));
  }
  return out;
}

Result<SmiHealth> ParseHealthCsv(std::string_view text) {
  SmiHealth q;
  bool truncated = false;
  auto lines = SplitLines(text, &truncated);
  for (const Line& line : lines) {
    if (const char* state = nvidia_driver::SmiFailureState(Trim(line.text))) {
      q.nvml = state;
      for (const Line& l : lines) {
        std::string_view t = Trim(l.text);
        if (!t.empty() && !nvidia_driver::SmiFailureState(t) && q.notes.size() < kMaxNotes)
          q.notes.push_back(Excerpt(t, 200));
      }
      return q;
    }
  }
  for (const Line& line : lines) {
    std::string_view t = Trim(line.text);
    if (t.empty()) continue;
    if (StartsWith(t, "index,") || StartsWith(t, "index ,")) {   // the header row (format=csv)
      if (!IsHealthHeader(t))
        return ParseError(kModule, kSmi,
                          fmt::format("a CSV header of other fields than the query's ({})",
                                      kHealthQueryFields),
                          &line);
      continue;
    }
    auto f = Split(t, ",");
    if (f.size() != kFields) {
      // R610's relabelled version lines, should another output's header reach this part.
      if (t.find("KMD Version") != std::string_view::npos || t.find("KMD version") != std::string_view::npos ||
          t.find("Deprecated") != std::string_view::npos) {
        if (q.notes.size() < kMaxNotes) q.notes.push_back(Excerpt(t, 200));
        continue;
      }
      if (truncated && &line == &lines.back()) return ParseError(kModule, kSmi, "output cut short", &line);
      return ParseError(kModule, kSmi, fmt::format("expected {} CSV fields", kFields), &line);
    }
    if (truncated && &line == &lines.back()) return ParseError(kModule, kSmi, "output cut short", &line);
    for (auto& field : f) field = Trim(field);
    GpuHealth g;
    auto index = ParseNonNegative(f[0]);
    if (!index || *index > 4096) return ParseError(kModule, kSmi, "bad GPU index", &line);
    g.index = static_cast<int>(*index);
    if (f[1].empty()) return ParseError(kModule, kSmi, "empty pci.bus_id", &line);
    g.bus_id = std::string(f[1]);
    if (!Unavailable(f[2], 2, &g)) {
      if (f[2] == "Enabled") g.ecc_enabled = true;
      else if (f[2] == "Disabled") g.ecc_enabled = false;
      else return ParseError(kModule, kSmi, "bad ecc.mode.current", &line);
    }
    for (size_t i : {size_t{3}, size_t{4}}) {
      if (Unavailable(f[i], i, &g)) continue;
      auto n = ParseNonNegative(f[i]);
      if (!n) return ParseError(kModule, kSmi, fmt::format("bad {}", kFieldNames[i]), &line);
      (i == 3 ? g.uncorrected_volatile : g.uncorrected_aggregate) = *n;
    }
    std::optional<bool>* flags[] = {&g.retired_pages_pending, &g.remapped_rows_pending, &g.remapped_rows_failure};
    for (size_t i = 5; i <= 7; ++i) {
      if (Unavailable(f[i], i, &g)) continue;
      if (f[i] == "Yes") *flags[i - 5] = true;
      else if (f[i] == "No") *flags[i - 5] = false;
      else return ParseError(kModule, kSmi, fmt::format("bad {}", kFieldNames[i]), &line);
    }
    if (!Unavailable(f[8], 8, &g)) {
      auto mask = ParseHex(f[8]);
      if (!mask) return ParseError(kModule, kSmi, "bad clocks_throttle_reasons.active", &line);
      g.throttle_mask = *mask;
      g.throttle_reasons = ThrottleReasonNames(*mask);
    }
    q.gpus.push_back(std::move(g));
  }
  return q;
}

Result<std::vector<Xid>> ParseKernelLog(std::string_view text) {
  std::vector<Xid> out;
  for (const Line& line : SplitLines(text)) {
    std::string_view t = Trim(line.text);
    if (UnreadableLog(t)) {
      Diagnostic d = ParseError(kModule, kLog, "could not be read", &line);
      d.hint = "read the kernel log as root (dmesg needs CAP_SYSLOG when kernel.dmesg_restrict=1)";
      return d;
    }
    constexpr std::string_view kMark = "NVRM: Xid (";
    size_t at = t.find(kMark);
    if (at == std::string_view::npos) continue;
    Xid x;
    x.line = line.number;
    x.stamp = std::string(Trim(t.substr(0, at)));
    std::string_view rest = t.substr(at + kMark.size());
    size_t close = rest.find("): ");
    if (close == std::string_view::npos) return ParseError(kModule, kLog, "Xid line without '): '", &line);
    std::string_view pci = rest.substr(0, close);
    if (StartsWith(pci, "PCI:")) pci.remove_prefix(4);
    x.pci = std::string(pci);
    x.bus_id = BusIdOf(pci);
    rest = rest.substr(close + 3);
    size_t comma = rest.find(',');
    auto code = ParseNonNegative(Trim(rest.substr(0, comma)));
    if (!code || *code > 100000) return ParseError(kModule, kLog, "Xid line without an XID number", &line);
    x.xid = static_cast<int>(*code);
    rest = comma == std::string_view::npos ? std::string_view() : Trim(rest.substr(comma + 1));
    // Newer drivers name the process: "pid=1234, name=python3, " or "pid='<unknown>', name=<unknown>, ".
    if (StartsWith(rest, "pid=")) {
      rest.remove_prefix(4);
      std::string_view pid = TakeField(&rest);
      if (auto n = ParseNonNegative(pid)) x.pid = *n;
    }
    if (StartsWith(rest, "name=")) {
      rest.remove_prefix(5);
      std::string_view name = TakeField(&rest);
      if (name != "<unknown>") x.process = std::string(name);
    }
    x.message = std::string(rest);
    out.push_back(std::move(x));
  }
  return out;
}

nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts) {
  PartFacts out(kModule, {{"nvml", nullptr}, {"gpu_count", nullptr}, {"gpus", json::array()},
                          {"xids", nullptr}, {"xid_counts", nullptr}});
  json& facts = out.facts();
  std::map<std::string, int> gpu_by_bus;
  if (const ProbePart* smi = FindPart(parts, kSmiPart)) {
    if (smi->absent()) {
      facts["nvml"] = "absent";
    } else if (Killed(smi->exit_status)) {
      facts["nvml"] = "timeout";
      out.Fail(kSmiPart, ParseError(kModule, kSmi, fmt::format("killed (exit {}): its output is incomplete", smi->exit_status)));
    } else {
      out.Read(kSmiPart, [&]() -> Status {
        auto q = ParseHealthCsv(smi->text);
        if (!q.ok()) return q.error();
        facts["nvml"] = q->nvml == "ok" && smi->exit_status != 0 ? "error" : q->nvml;
        if (!q->notes.empty()) facts["smi_notes"] = q->notes;
        if (q->nvml == "ok") facts["gpu_count"] = q->gpus.size();
        for (const GpuHealth& g : q->gpus) {
          auto opt = [](const auto& v) { return v ? json(*v) : json(); };
          json jg = {{"index", g.index}, {"bus_id", g.bus_id}, {"ecc_enabled", opt(g.ecc_enabled)},
                     {"uncorrected_volatile", opt(g.uncorrected_volatile)},
                     {"uncorrected_aggregate", opt(g.uncorrected_aggregate)},
                     {"retired_pages_pending", opt(g.retired_pages_pending)},
                     {"remapped_rows_pending", opt(g.remapped_rows_pending)},
                     {"remapped_rows_failure", opt(g.remapped_rows_failure)},
                     {"throttle_mask", g.throttle_mask ? json(HexMask(*g.throttle_mask)) : json()},
                     {"throttle_reasons", g.throttle_reasons}};
          if (!g.unavailable.empty()) jg["unavailable"] = g.unavailable;
          facts["gpus"].push_back(std::move(jg));
          gpu_by_bus[g.bus_id] = g.index;
        }
        return OkStatus();
      });
    }
  }
  if (const ProbePart* log = FindPart(parts, kKernelLogPart); log && !log->absent()) {
    out.Read(kKernelLogPart, [&]() -> Status {
      auto xids = ParseKernelLog(log->text);
      if (!xids.ok()) return xids.error();
      json list = json::array(), counts = json::object();
      for (const Xid& x : *xids) {
        std::string key = std::to_string(x.xid);
        counts[key] = counts.value(key, 0) + 1;
        if (list.size() >= kMaxXids) {
          facts["xids_truncated"] = true;
          continue;
        }
        auto gpu = gpu_by_bus.find(x.bus_id);
        list.push_back({{"xid", x.xid}, {"pci", x.pci}, {"bus_id", x.bus_id},
                        {"gpu", gpu == gpu_by_bus.end() ? json() : json(gpu->second)},
                        {"pid", x.pid ? json(*x.pid) : json()},
                        {"process", x.process.empty() ? json() : json(x.process)},
                        {"message", x.message}, {"line", x.line}});
      }
      facts["xids"] = std::move(list);
      facts["xid_counts"] = std::move(counts);
      return OkStatus();
    });
  }
  return std::move(out).Finish();
}

}  // namespace plumb::modules::gpu_health
