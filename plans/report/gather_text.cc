// What `plumb gather` prints (plans/report/gather_text.h).
#include "plans/report/gather_text.h"

#include <map>
#include <vector>

#include <fmt/format.h>

#include "modules/module.h"

namespace plumb::plans::report {

std::string UnreadableReason(const Diagnostic& d) {
  static const std::map<std::string, std::string> kReasons = {
      {"ssh.refused", "refused"},   {"ssh.timeout", "timeout"},
      {"ssh.auth", "auth"},         {"ssh.hostkey", "host key"},
      {"ssh.hostkey-changed", "host key changed"}, {"ssh.io", "io"}};
  if (auto it = kReasons.find(d.code); it != kReasons.end()) return it->second;
  if (d.code.rfind("probe.", 0) == 0) return "probe error";
  return d.code.empty() ? "error" : d.code;
}

std::string CompactFacts(const nlohmann::json& facts, size_t width) {
  std::string out;
  auto add = [&](const std::string& item) {
    if (!out.empty()) out += ' ';
    out += item;
  };
  if (facts.is_object()) {
    for (const auto& [k, v] : facts.items()) {
      if (v.is_object()) add(fmt::format("{}{{{}}}", k, v.size()));
      else if (v.is_array()) add(fmt::format("{}[{}]", k, v.size()));
      else if (v.is_string()) add(fmt::format("{}={}", k, v.get<std::string>()));
      else add(fmt::format("{}={}", k, v.dump()));
    }
  } else if (facts.is_array()) {
    add(fmt::format("[{}]", facts.size()));
  } else {
    add(facts.is_string() ? facts.get<std::string>() : facts.dump());
  }
  if (out.size() > width) out = out.substr(0, width - 3) + "...";
  return out;
}

std::string GatherText(const ObservedState& s, double wall_s) {
  std::string out;
  std::vector<const NodeObservation*> bad;
  size_t partial = 0;   // read, but some module not whole
  for (const auto& [name, n] : s.nodes) {
    if (!n.reachable) {
      bad.push_back(&n);
      continue;
    }
    size_t errs = n.ModuleErrorCount();
    if (errs) ++partial;
    out += fmt::format("{}  {:.2f}s{}\n", name, n.elapsed_s,
                       errs ? fmt::format("  ({} module error{})", errs, errs > 1 ? "s" : "") : "");
    for (const auto& [module, f] : n.facts) {
      // What a module read is shown even when part of it failed; each failure on its own line.
      if (f.ok()) out += fmt::format("  {:<15} {}\n", module, CompactFacts(f.value()));
      for (const Diagnostic& d : modules::ModuleProblems(f))
        out += fmt::format("  {:<15} ERROR {}: {}\n", f.ok() ? "" : module, d.code, d.message);
    }
  }
  std::map<std::string, int> reasons;
  if (!bad.empty()) out += "\nunreadable nodes:\n";
  for (const auto* n : bad) {
    std::string reason = UnreadableReason(n->error);
    ++reasons[reason];
    out += fmt::format("  {}  [{}] {}\n", n->node, reason, n->error.message);
    if (!n->error.hint.empty()) out += fmt::format("      hint: {}\n", n->error.hint);
  }
  std::string why;
  for (const auto& [r, c] : reasons) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", c, r);
  out += fmt::format("\ngathered {} node{} in {:.1f}s: {} read{}, {} unreadable{}\n", s.nodes.size(),
                     s.nodes.size() == 1 ? "" : "s", wall_s, s.nodes.size() - bad.size(),
                     partial ? fmt::format(" ({} with module errors)", partial) : "", bad.size(),
                     why.empty() ? "" : " (" + why + ")");
  return out;
}

nlohmann::json GatherSummaryJson(const ObservedState& s, double wall_s) {
  nlohmann::json reasons = nlohmann::json::object();
  for (const auto& [name, n] : s.nodes) {
    if (!n.reachable) reasons[name] = UnreadableReason(n.error);
  }
  return {{"nodes", s.nodes.size()},
          {"read", s.nodes.size() - s.UnreachableCount()},
          {"unreadable", s.UnreachableCount()},
          {"module_errors", s.ProbeErrorCount()},
          {"reasons", reasons},
          {"wall_s", wall_s}};
}

}  // namespace plumb::plans::report
