#include "plans/observe/observed.h"

#include "plans/core/atomic_file.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "modules/registry.h"
#include "plans/core/digest.h"

namespace plumb::plans {
namespace {

constexpr const char* kFormat = kSnapshotFormat;

Severity SeverityFromName(const std::string& s) {
  if (s == "warning") return Severity::kWarning;
  if (s == "note") return Severity::kNote;
  return Severity::kError;
}

Diagnostic DiagnosticFromJson(const nlohmann::json& j) {
  Diagnostic d;
  d.severity = SeverityFromName(j.value("severity", "error"));
  d.code = j.value("code", "");
  d.message = j.value("message", "");
  d.hint = j.value("hint", "");
  d.key_path = j.value("key", "");
  d.where.file = j.value("file", "");
  d.where.line = j.value("line", 0);
  d.where.column = j.value("column", 0);
  return d;
}

}  // namespace

Diagnostic SnapshotError(std::string message) {
  return Diagnostic::Error("facts.snapshot", std::move(message), {}, {},
                           "write snapshots with `plumb gather --facts-out FILE`");
}

size_t ObservedState::UnreachableCount() const {
  size_t n = 0;
  for (const auto& [_, o] : nodes) n += o.reachable ? 0 : 1;
  return n;
}

size_t ObservedState::ProbeErrorCount() const {
  size_t n = 0;
  for (const auto& [_, o] : nodes) n += o.reachable && o.ModuleErrorCount() > 0 ? 1 : 0;
  return n;
}

size_t NodeObservation::ModuleErrorCount() const {
  size_t n = 0;
  for (const auto& [_, f] : facts) n += modules::ModuleProblems(f).empty() ? 0 : 1;
  return n;
}

std::string FactsDigest(const std::map<std::string, Result<modules::Facts>>& facts,
                        const modules::Registry& registry) {
  // nlohmann's object keeps keys sorted and dump() emits no whitespace: that is the canonical
  // form. Only the error code enters the digest: messages may be reworded between versions.
  // A health module's facts (ECC counts, throttle reasons, XIDs, IB error counters) are
  // measurements that move under load, not state plumb converges: in the digest, every plan
  // would be stale by the time it is applied. A failed check is re-judged where it matters (a
  // rollout's verify and health step), not by the stale check.
  nlohmann::json canon = nlohmann::json::object();
  for (const auto& [module, f] : facts) {
    const modules::Module* m = registry.Find(module);
    if (m && m->Info().IsHealth()) continue;
    canon[module] = f.ok() ? f.value() : nlohmann::json{{"$error", f.error().code}};
  }
  return JsonDigest(canon);
}

nlohmann::json ToJson(const NodeObservation& n) {
  nlohmann::json j = {{"reachable", n.reachable}, {"elapsed_s", n.elapsed_s}};
  if (!n.reachable) j["error"] = n.error.ToJson();
  nlohmann::json facts = nlohmann::json::object();
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [module, f] : n.facts) {
    if (f.ok()) facts[module] = f.value();
    else errors[module] = f.error().ToJson();
  }
  j["facts"] = std::move(facts);
  if (!errors.empty()) j["errors"] = std::move(errors);
  if (!n.raw_digest.empty()) j["raw_digest"] = n.raw_digest;
  if (!n.facts_digest.empty()) j["facts_digest"] = n.facts_digest;
  return j;
}

void SnapshotHeaderToJson(const ObservedState& s, nlohmann::json& top) {
  if (!s.gathered_at.empty()) top["gathered_at"] = s.gathered_at;
  if (!s.commit.empty()) top["commit"] = s.commit;
  if (s.working_tree) top["working_tree"] = true;
  if (!s.shard.empty()) top["shard"] = s.shard;
  if (!s.selection_digest.empty())
    top["selection"] = {{"limit", s.selection}, {"nodes", s.selection_nodes}, {"digest", s.selection_digest}};
}

void SnapshotHeaderFromJson(const nlohmann::json& top, ObservedState& s) {
  // Wrong-typed optional keys read as absent: a header is evidence, not a contract to enforce.
  auto text = [&top](const char* key) {
    auto it = top.find(key);
    return it != top.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  s.gathered_at = text("gathered_at");
  s.commit = text("commit");
  s.shard = text("shard");
  if (auto sel = top.find("selection"); sel != top.end() && sel->is_object()) {
    auto limit = sel->find("limit"), nodes = sel->find("nodes"), digest = sel->find("digest");
    if (limit != sel->end() && limit->is_string() && digest != sel->end() && digest->is_string()) {
      s.selection = limit->get<std::string>();
      s.selection_digest = digest->get<std::string>();
      s.selection_nodes = nodes != sel->end() && nodes->is_number_unsigned() ? nodes->get<size_t>() : 0;
    }
  }
  auto wt = top.find("working_tree");
  s.working_tree = wt != top.end() && wt->is_boolean() && wt->get<bool>();
}

nlohmann::json ToJson(const ObservedState& s) {
  nlohmann::json nodes = nlohmann::json::object();
  for (const auto& [name, n] : s.nodes) nodes[name] = ToJson(n);
  nlohmann::json j = {{"format", kFormat}, {"nodes", std::move(nodes)}};
  SnapshotHeaderToJson(s, j);
  return j;
}

void WriteObservedStateJson(const ObservedState& s, std::ostream& out, const nlohmann::json& extra) {
  // Keys in sorted order, like nlohmann's own objects, so the output equals ToJson(s).
  nlohmann::json top = extra;
  top["format"] = kFormat;
  SnapshotHeaderToJson(s, top);
  top["nodes"] = nullptr;  // placeholder: streamed below
  out << "{\n";
  bool first = true;
  for (const auto& [key, value] : top.items()) {
    out << (first ? "" : ",\n") << nlohmann::json(key).dump() << ": ";
    first = false;
    if (key != "nodes") {
      out << value.dump();
      continue;
    }
    out << "{";
    bool first_node = true;
    for (const auto& [name, n] : s.nodes) {
      out << (first_node ? "\n  " : ",\n  ") << nlohmann::json(name).dump() << ": "
          << ToJson(n).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      first_node = false;
    }
    out << (first_node ? "}" : "\n}");
  }
  out << "\n}\n";
}

Result<NodeObservation> NodeObservationFromJson(const std::string& name, nlohmann::json j) {
  try {
    NodeObservation n;
    n.node = name;
    n.reachable = j.at("reachable").get<bool>();
    if (j.contains("error")) n.error = DiagnosticFromJson(j.at("error"));
    if (j.contains("facts")) {
      for (auto& [module, f] : j.at("facts").items()) n.facts.emplace(module, std::move(f));
    }
    if (j.contains("errors")) {
      for (const auto& [module, e] : j.at("errors").items()) {
        n.facts.emplace(module, DiagnosticFromJson(e));
      }
    }
    n.raw_digest = j.value("raw_digest", "");
    n.facts_digest = j.value("facts_digest", "");
    n.elapsed_s = j.value("elapsed_s", 0.0);
    if (!n.reachable && !j.contains("error")) {
      return SnapshotError(fmt::format("node '{}' is unreachable but has no 'error'", name));
    }
    return n;
  } catch (const nlohmann::json::exception& e) {
    return SnapshotError(fmt::format("node '{}': {}", name, e.what()));
  }
}

Status CheckSnapshotTop(const nlohmann::json& top, const std::string& source) {
  if (!top.is_object() || top.value("format", "") != kFormat) {
    return SnapshotError(fmt::format("{} is not a facts snapshot (expected \"format\": \"{}\")",
                                     source, kFormat));
  }
  if (!top.contains("nodes") || !top["nodes"].is_object())
    return SnapshotError(fmt::format("{}: 'nodes' is missing or not an object", source));
  return OkStatus();
}

Result<ObservedState> ObservedStateFromJson(const nlohmann::json& j) {
  if (Status st = CheckSnapshotTop(j, "the document"); !st.ok()) return st.error();
  ObservedState s;
  SnapshotHeaderFromJson(j, s);
  for (const auto& [name, nj] : j["nodes"].items()) {
    auto n = NodeObservationFromJson(name, nj);
    if (!n.ok()) return n.error();
    s.nodes.emplace(name, std::move(n).value());
  }
  return s;
}

NodeFacts ToNodeFacts(const NodeObservation& n) {
  NodeObservation copy = n;
  return ToNodeFacts(std::move(copy));
}

NodeFacts ToNodeFacts(NodeObservation&& n) {
  NodeFacts f;
  f.readable = n.reachable;
  if (!n.reachable) f.unreadable_reason = n.error.message.empty() ? n.error.code : n.error.message;
  // The digest first: it covers the facts as observed, errors included.
  f.facts_digest = n.facts_digest.empty() && n.reachable ? FactsDigest(n.facts) : n.facts_digest;
  for (auto& [module, r] : n.facts) {
    // A module read in part keeps its facts and is a module error too (ModuleProblems).
    if (std::string problem = modules::ModuleProblemText(r); !problem.empty())
      f.module_errors[module] = std::move(problem);
    if (r.ok()) f.facts[module] = std::move(r.value());
  }
  n.facts.clear();
  return f;
}

Status WriteObservedState(const ObservedState& s, const std::string& path) {
  return WriteFileAtomically(path, [&s](std::ostream& out) { WriteObservedStateJson(s, out); },
                             "facts.write");
}

}  // namespace plumb::plans
