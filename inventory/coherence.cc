#include "inventory/coherence.h"

#include <regex>
#include <set>

#include <fmt/format.h>

#include "inventory/version.h"
#include "schemas/embedded.h"
#include "schemas/json_pointer.h"
#include "schemas/yaml_json.h"

namespace plumb::inventory {

using nlohmann::json;

namespace {

// "nvidia.driver" -> "/nvidia/driver" (pin names in rules never contain '/' or '~').
std::string PinPointer(const std::string& dotted) {
  std::string p;
  size_t start = 0;
  while (true) {
    size_t dot = dotted.find('.', start);
    p = schemas::PointerAppend(p, dotted.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return p;
}

struct Pin {
  std::string value;
  Location where;
  bool set = false;
};

Pin GetPin(const NodeDesired& nd, const std::string& name) {
  Pin pin;
  std::string ptr = PinPointer(name);
  const json* v = schemas::ValueAt(nd.desired, ptr);
  if (v == nullptr || !v->is_string()) return pin;
  pin.value = v->get<std::string>();
  pin.set = true;
  if (auto it = nd.origins->find(ptr); it != nd.origins->end()) pin.where = it->second;
  return pin;
}

std::string Capture(const std::string& pattern, const std::string& value) {
  try {
    std::smatch m;
    std::regex re(pattern);
    if (std::regex_search(value, m, re) && m.size() > 1) return m[1].str();
  } catch (const std::exception&) {
  }
  return {};
}

struct Violation {
  Diagnostic diag;
  std::vector<std::string> nodes;
};

}  // namespace

Result<CompatRules> ParseCompatRules(const std::string& text, const std::string& file) {
  Diagnostics diags;
  auto doc = schemas::ParseYaml(text, file, diags);
  if (!doc || diags.HasErrors()) return diags.items().front();
  CompatRules out;
  const json& j = doc->json;
  if (!j.is_object()) return Diagnostic::Error("rules.format", "rules file is not a mapping", {file});
  if (auto t = j.find("tables"); t != j.end() && t->is_object()) {
    for (auto it = t->begin(); it != t->end(); ++it) {
      auto& rows = out.tables[it.key()];
      if (!it->is_array()) continue;
      for (const auto& r : *it) {
        CompatRow row{schemas::StringMember(r, "cuda"), schemas::StringMember(r, "min"), schemas::StringMember(r, "release")};
        if (row.match.empty()) row.match = schemas::StringMember(r, "match");
        if (!ParseDotted(row.match) || !ParseDotted(row.min)) {
          return Diagnostic::Error("rules.format",
                                   fmt::format("table {}: row '{}' needs dotted versions",
                                               it.key(), row.release), {file});
        }
        rows.push_back(row);
      }
    }
  }
  if (auto rs = j.find("rules"); rs != j.end() && rs->is_array()) {
    for (const auto& r : *rs) {
      CompatRule rule{schemas::StringMember(r, "id"), schemas::StringMember(r, "kind"), schemas::StringMember(r, "why"), schemas::StringMember(r, "subject"),
                      schemas::StringMember(r, "object"), schemas::StringMember(r, "table"), schemas::StringMember(r, "a"), schemas::StringMember(r, "b"),
                      schemas::StringMember(r, "a_capture"), schemas::StringMember(r, "b_capture")};
      bool ok = !rule.id.empty() &&
                ((rule.kind == "min_version_table" && out.tables.count(rule.table) &&
                  !rule.subject.empty() && !rule.object.empty()) ||
                 (rule.kind == "equal" && !rule.a.empty() && !rule.b.empty()) ||
                 (rule.kind == "capture_equal" && !rule.a.empty() && !rule.b.empty() &&
                  !rule.a_capture.empty() && !rule.b_capture.empty()));
      if (!ok) {
        return Diagnostic::Error("rules.format",
                                 fmt::format("rule '{}' (kind '{}') is incomplete", rule.id, rule.kind),
                                 {file});
      }
      out.rules.push_back(rule);
    }
  }
  return out;
}

const Result<CompatRules>& BuiltinCompatRules() {
  static const Result<CompatRules> rules = [] {
    auto text = schemas::FindEmbedded("rules/compat.yaml");
    if (!text) {
      return Result<CompatRules>(Diagnostic::Error("rules.missing", "compat.yaml is not built in"));
    }
    return ParseCompatRules(std::string(*text), "rules/compat.yaml");
  }();
  return rules;
}

namespace {

// One merged desired state against every rule: (report key, diagnostic) per violation. The
// key names the rule and both pins' locations, so nodes on the same stack share one report.
std::vector<std::pair<std::string, Diagnostic>> CheckOne(const CompatRules& rules,
                                                          const NodeDesired& nd) {
  std::vector<std::pair<std::string, Diagnostic>> out;
  for (const auto& rule : rules.rules) {
    if (rule.kind == "min_version_table") {
      Pin subj = GetPin(nd, rule.subject);
      Pin obj = GetPin(nd, rule.object);
      if (!subj.set || !obj.set) continue;
      auto sv = ParseDotted(subj.value);
      auto ov = ParseDotted(obj.value);
      if (!sv || !ov) continue;  // the schema reports malformed versions
      const CompatRow* best = nullptr;
      size_t best_len = 0;
      for (const auto& row : rules.tables.at(rule.table)) {
        auto rv = ParseDotted(row.match);
        if (rv && DottedPrefix(*rv, *sv) && rv->size() > best_len) {
          best = &row;
          best_len = rv->size();
        }
      }
      std::string key = rule.id + "|" + subj.where.ToString() + "|" + obj.where.ToString();
      if (best == nullptr) {
        Diagnostic d = Diagnostic::Warning(
            "coherence.unknown-version",
            fmt::format("{} {} is not in plumb's compatibility table '{}', so its minimum {} "
                        "cannot be checked [rule: {}]",
                        rule.subject, subj.value, rule.table, rule.object, rule.id),
            subj.where, rule.subject,
            "check NVIDIA's release notes by hand, or add a row to schemas/rules/compat.yaml");
        out.push_back({key, std::move(d)});
        continue;
      }
      if (CompareDotted(*ov, *ParseDotted(best->min)) >= 0) continue;
      Diagnostic d = Diagnostic::Error(
          "coherence." + rule.id,
          fmt::format("{} {} needs {} >= {} ({}), but {} is {} (set at {}) [rule: {}]",
                      rule.subject, subj.value, rule.object, best->min, best->release,
                      rule.object, obj.value, obj.where.ToString(), rule.id),
          subj.where, rule.subject,
          fmt::format("raise {} to {} or later, or pin an older {}; {}", rule.object, best->min,
                      rule.subject, rule.why));
      out.push_back({key, std::move(d)});
    } else if (rule.kind == "equal" || rule.kind == "capture_equal") {
      Pin a = GetPin(nd, rule.a);
      Pin b = GetPin(nd, rule.b);
      if (!a.set || !b.set) continue;
      std::string av = a.value, bv = b.value;
      if (rule.kind == "capture_equal") {
        av = Capture(rule.a_capture, a.value);
        bv = Capture(rule.b_capture, b.value);
        if (av.empty() || bv.empty()) continue;  // e.g. an NCCL version without +cudaX.Y
      }
      if (av == bv) continue;
      std::string msg =
          rule.kind == "equal"
              ? fmt::format("{} {} must equal {} {} (set at {}) [rule: {}]", rule.a, a.value,
                            rule.b, b.value, b.where.ToString(), rule.id)
              : fmt::format("{} {} is built for {} {}, but {} is {} (major {}, set at {}) "
                            "[rule: {}]",
                            rule.a, a.value, rule.b, av, rule.b, b.value, bv,
                            b.where.ToString(), rule.id);
      Diagnostic d = Diagnostic::Error("coherence." + rule.id, msg, a.where, rule.a,
                                       fmt::format("make them agree; {}", rule.why));
      out.push_back(
          {rule.id + "|" + a.where.ToString() + "|" + b.where.ToString(), std::move(d)});
    }
  }
  return out;
}

}  // namespace

void CheckCoherence(const CompatRules& rules, const std::map<std::string, NodeDesired>& desired,
                    Diagnostics& diags) {
  // Keyed by rule and both pins' locations: nodes on the same stack share one report.
  std::map<std::string, Violation> found;
  std::vector<std::string> order;
  auto report = [&](const std::string& key, const std::string& node, const Diagnostic& d) {
    auto it = found.find(key);
    if (it == found.end()) {
      it = found.emplace(key, Violation{d, {}}).first;
      order.push_back(key);
    }
    it->second.nodes.push_back(node);
  };
  // Findings depend only on the merged desired state and its origins, which nodes with the
  // same groups share: each shared state is checked once (10,000 nodes in one group: once).
  std::map<std::pair<const void*, const void*>, std::vector<std::pair<std::string, Diagnostic>>>
      by_state;
  for (const auto& [name, nd] : desired) {
    auto [it, fresh] = by_state.try_emplace({nd.desired.Id(), nd.origins.Id()});
    if (fresh) it->second = CheckOne(rules, nd);
    for (const auto& [key, d] : it->second) report(key, name, d);
  }
  for (const auto& key : order) {
    Violation& v = found.at(key);
    std::string nodes;
    for (size_t i = 0; i < v.nodes.size() && i < 4; ++i) nodes += (i ? ", " : "") + v.nodes[i];
    if (v.nodes.size() > 4) nodes += fmt::format(", ... ({} nodes)", v.nodes.size());
    v.diag.hint += (v.diag.hint.empty() ? "" : "\n  ") + std::string("affects: ") + nodes;
    diags.Add(std::move(v.diag));
  }
}

}  // namespace plumb::inventory
