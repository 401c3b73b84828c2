#include "modules/ib_health/parse.h"

#include <fmt/format.h>

#include "modules/parse_util.h"
#include "modules/part_facts.h"

namespace plumb::modules::ib_health {
namespace {

using nlohmann::json;

constexpr std::string_view kModule = "ib_health";
constexpr std::string_view kTool = "perfquery";

// The diagnostics' own messages: libibmad's IBWARN/IBPANIC and infiniband-diags' IBEXIT.
bool IsDiagMessage(std::string_view t) {
  return StartsWith(t, "ibwarn:") || StartsWith(t, "ibpanic:") || t.find("iberror:") != std::string_view::npos;
}

// The number after `word` in `s` ("Lid 1 port 1"), if any.
std::optional<int> NumberAfter(std::string_view s, std::string_view word) {
  size_t at = s.find(word);
  if (at == std::string_view::npos) return std::nullopt;
  auto w = SplitWhitespace(s.substr(at + word.size()));
  if (w.empty()) return std::nullopt;
  std::string_view n = w[0];
  while (!n.empty() && (n.back() == ')' || n.back() == ';' || n.back() == ',')) n.remove_suffix(1);
  auto v = ParseNonNegative(n);
  if (!v || *v > 65535) return std::nullopt;
  return static_cast<int>(*v);
}

bool IsSelector(std::string_view name) {
  return name == "PortSelect" || name == "CounterSelect" || name == "CounterSelect2";
}

}  // namespace

Result<std::vector<PortCounters>> ParsePerfquery(std::string_view text) {
  std::vector<PortCounters> out;
  auto lines = SplitLines(text);
  for (const Line& line : lines) {
    std::string_view t = Trim(line.text);
    if (t.empty()) continue;
    if (IsDiagMessage(t)) return ParseError(kModule, kTool, "failed", &line);
    if (t.front() == '#') {
      if (t.find("counters") == std::string_view::npos)
        return ParseError(kModule, kTool, "expected '# Port counters: ...'", &line);
      PortCounters b;
      b.line = line.number;
      b.extended = t.find("extended counters") != std::string_view::npos;
      b.lid = NumberAfter(t, "Lid ");
      if (t.find("all ports") == std::string_view::npos) b.port = NumberAfter(t, " port ");
      if (size_t cm = t.find("CapMask: "); cm != std::string_view::npos) {
        std::string_view v = t.substr(cm + 9);
        size_t end = v.find_first_of(" )");
        b.cap_mask = std::string(v.substr(0, end));
      }
      out.push_back(std::move(b));
      continue;
    }
    // "SymbolErrorCounter:..............0": the name, a colon, dots, the value.
    size_t colon = t.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return ParseError(kModule, kTool, "expected 'Name:....value'", &line);
    std::string_view name = t.substr(0, colon);
    std::string_view value = t.substr(colon + 1);
    while (!value.empty() && value.front() == '.') value.remove_prefix(1);
    value = Trim(value);
    for (char c : name)
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
        return ParseError(kModule, kTool, "bad counter name", &line);
    if (out.empty()) {   // counters without a header (perfquery piped through a filter, ibsim)
      PortCounters b;
      b.line = line.number;
      out.push_back(std::move(b));
    }
    if (IsSelector(name)) continue;
    auto v = ParseUnsigned(value);
    if (!v) return ParseError(kModule, kTool, "bad counter value", &line);
    out.back().counters[std::string(name)] = *v;
  }
  bool any = false;
  for (const auto& b : out) any = any || !b.counters.empty();
  if (!any) {
    for (const Line& line : lines)
      if (!Trim(line.text).empty()) return ParseError(kModule, kTool, "no counters", &line);
    return ParseError(kModule, kTool, "empty output");
  }
  return out;
}

nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts) {
  PartFacts out(kModule, {{"present", false}, {"ports", json::array()}});
  json& facts = out.facts();
  for (const ProbePart& p : parts) {
    if (!StartsWith(p.name, kPerfqueryPartPrefix)) continue;
    std::string_view rest = std::string_view(p.name).substr(kPerfqueryPartPrefix.size());
    size_t dot = rest.rfind('.');
    if (dot == std::string_view::npos || dot == 0) continue;
    auto port = ParseNonNegative(rest.substr(dot + 1));
    if (!port || *port > 255) continue;
    std::string ca(rest.substr(0, dot));
    if (p.absent()) continue;
    facts["present"] = true;
    out.Read(p.name, [&]() -> Status {
      auto blocks = ParsePerfquery(p.text);
      if (!blocks.ok()) return blocks.error();
      std::map<std::string, uint64_t> merged;
      std::optional<int> lid;
      // Default form first, then the extended form over it.
      for (bool extended : {false, true})
        for (const PortCounters& b : *blocks) {
          if (b.extended != extended) continue;
          if (!lid) lid = b.lid;
          for (const auto& [k, v] : b.counters) merged[k] = v;
        }
      uint64_t errors = 0;
      for (std::string_view k : kErrorCounters)
        if (auto it = merged.find(std::string(k)); it != merged.end()) errors += it->second;
      facts["ports"].push_back({{"ca", ca}, {"port", *port}, {"lid", lid ? json(*lid) : json()},
                                {"counters", merged}, {"error_total", errors}});
      return OkStatus();
    });
  }
  return std::move(out).Finish();
}

}  // namespace plumb::modules::ib_health
