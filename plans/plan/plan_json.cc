#include "plans/plan/plan_json.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "plans/core/digest.h"
#include "plans/core/json_text.h"
#include "plans/core/parallel.h"
#include "schemas/validate.h"

namespace plumb::plans {
namespace {

using nlohmann::json;

json LocationJson(const Location& l) {
  if (!l.known()) return nullptr;
  return {{"file", l.file}, {"line", l.line}, {"column", l.column}};
}

Location LocationFrom(const json& j) {
  if (!j.is_object()) return {};
  return {j.value("file", ""), j.value("line", 0), j.value("column", 0)};
}

const char* ModeName(inventory::DomainMode m) {
  return m == inventory::DomainMode::kAligned ? "aligned" : "spread";
}

const char* SchedulerName(inventory::DrainScheduler s) {
  switch (s) {
    case inventory::DrainScheduler::kSlurm: return "slurm";
    case inventory::DrainScheduler::kKubernetes: return "kubernetes";
    case inventory::DrainScheduler::kNone: return "none";
  }
  return "none";
}

const char* UnhealthyName(inventory::RolloutPolicy::Unhealthy u) {
  return u == inventory::RolloutPolicy::Unhealthy::kChange ? "change" : "skip";
}

// `version`: the plan's format_version (`unhealthy` is a version 3 field).
json PolicyJson(const inventory::RolloutPolicy& p, int version) {
  json out = {{"name", p.name},
          {"file", p.file},
          {"drain", {{"scheduler", SchedulerName(p.scheduler)},
                     {"timeout_s", p.drain_timeout_s},
                     {"scheduler_timeout_s", p.scheduler_timeout_s}}},
          {"max_unavailable", p.max_unavailable_is_percent
                                  ? fmt::format("{}%", p.max_unavailable_count)
                                  : std::to_string(p.max_unavailable_count)},
          {"failure_domain",
           {{"by", p.domain_by}, {"mode", ModeName(p.domain_mode)}, {"at_once", p.domain_at_once}}},
          {"canary", p.canary},
          {"max_failures", p.max_failures},
          {"health", p.health},
          {"health_timeout_s", p.health_timeout_s},
          {"window", {{"cron", p.window_cron}, {"duration_s", p.window_duration_s}}}};
  if (version >= 3) out["unhealthy"] = UnhealthyName(p.unhealthy);
  return out;
}

inventory::RolloutPolicy PolicyFrom(const json& j) {
  inventory::RolloutPolicy p;
  p.name = j.at("name").get<std::string>();
  p.file = j.value("file", "");
  const json& d = j.at("drain");
  std::string s = d.at("scheduler").get<std::string>();
  p.scheduler = s == "slurm"        ? inventory::DrainScheduler::kSlurm
                : s == "kubernetes" ? inventory::DrainScheduler::kKubernetes
                                    : inventory::DrainScheduler::kNone;
  p.drain_timeout_s = d.at("timeout_s").get<int>();
  p.scheduler_timeout_s = d.value("scheduler_timeout_s", p.scheduler_timeout_s);
  std::string mu = j.at("max_unavailable").get<std::string>();
  p.max_unavailable_is_percent = !mu.empty() && mu.back() == '%';
  p.max_unavailable_count = std::stoi(p.max_unavailable_is_percent ? mu.substr(0, mu.size() - 1) : mu);
  const json& fd = j.at("failure_domain");
  p.domain_by = fd.at("by").get<std::string>();
  p.domain_mode = fd.at("mode").get<std::string>() == "aligned" ? inventory::DomainMode::kAligned
                                                                 : inventory::DomainMode::kSpread;
  p.domain_at_once = fd.at("at_once").get<int>();
  p.canary = j.at("canary").get<int>();
  p.max_failures = j.at("max_failures").get<int>();
  p.health = j.at("health").get<std::vector<std::string>>();
  p.health_timeout_s = j.at("health_timeout_s").get<int>();
  p.window_cron = j.at("window").at("cron").get<std::string>();
  p.window_duration_s = j.at("window").at("duration_s").get<int>();
  // Versions 1 and 2 do not say: those plans were made before the choice, which skips.
  if (j.value("unhealthy", "skip") == "change") p.unhealthy = inventory::RolloutPolicy::Unhealthy::kChange;
  return p;
}

json PlannedActionJson(const PlannedAction& a) {
  json aj = a.action.ToJson();
  aj["reason"] = ChangeReasonName(a.reason);
  aj["origin"] = LocationJson(a.origin);
  return aj;
}

Result<PlannedAction> PlannedActionFrom(const json& aj) {
  auto a = modules::Action::FromJson(aj);
  if (!a.ok()) return a.error();
  return PlannedAction{std::move(*a),
                       aj.value("reason", "intent") == "repair" ? ChangeReason::kRepair
                                                               : ChangeReason::kIntent,
                       LocationFrom(aj.value("origin", json()))};
}

// `version`: the plan's format_version; a version 1 plan (read back from an older run's
// journal) is written as it was, so its digest still matches.
json NodeJson(const NodePlan& n, int version) {
  json actions = json::array();
  for (const PlannedAction& a : n.actions) actions.push_back(PlannedActionJson(a));
  json out{{"node", n.node},
          {"rollout", n.rollout},
          {"disruption", modules::DisruptionName(n.disruption)},
          {"facts_digest", n.facts_digest},
          {"marker_commit", n.marker_commit},
          {"already_unavailable", n.already_unavailable},
          {"admin_drained", n.admin_drained},
          {"held_by_run", n.held_by_run},
          {"left_drained_by", n.left_by_run.empty()
                                  ? json(nullptr)
                                  : json{{"run", n.left_by_run}, {"step", n.left_at_step},
                                         {"reason", n.left_reason}}},
          {"return_to_service", n.return_to_service},
          {"actions", std::move(actions)}};
  if (version >= 2) out["desired_digest"] = n.desired_digest;
  if (version >= 3) out["skipped_unhealthy"] = n.skipped_unhealthy;
  return out;
}

json FindingJson(const Finding& f) {
  json out = f.check.ToJson();
  out["origin"] = LocationJson(f.origin);
  return out;
}

json HealthJson(const std::vector<NodeFindings>& health) {
  json out = json::array();
  for (const NodeFindings& h : health) {
    json findings = json::array();
    for (const Finding& f : h.findings) findings.push_back(FindingJson(f));
    out.push_back({{"node", h.node}, {"unhealthy", h.Unhealthy()}, {"findings", std::move(findings)}});
  }
  return out;
}

modules::CheckStatus StatusFrom(const std::string& s) {
  if (s == "pass") return modules::CheckStatus::kPass;
  if (s == "skip") return modules::CheckStatus::kSkip;
  if (s == "warn") return modules::CheckStatus::kWarn;
  return modules::CheckStatus::kFail;
}

Finding FindingFrom(const json& f) {
  Finding out;
  out.check.module = f.at("module").get<std::string>();
  out.check.id = f.at("id").get<std::string>();
  out.check.name = f.at("name").get<std::string>();
  out.check.subject = f.at("subject").get<std::string>();
  out.check.status = StatusFrom(f.at("status").get<std::string>());
  out.check.measured = f.value("measured", json());
  out.check.threshold = f.value("threshold", json());
  out.check.message = f.at("message").get<std::string>();
  out.origin = LocationFrom(f.value("origin", json()));
  return out;
}

// A version 1 or 2 plan's failed health check, written as an action (params.check): a finding.
bool IsLegacyCheckAction(const modules::Action& a) {
  const auto c = a.params.find("check");
  return c != a.params.end() && *c == true;
}

Finding FindingFromLegacyAction(const PlannedAction& pa) {
  Finding f;
  const modules::Action& a = pa.action;
  f.check.module = a.module;
  f.check.id = a.id;
  f.check.name = a.id;   // the action kept no name or subject apart: its summary says both
  f.check.status = modules::CheckStatus::kFail;
  f.check.measured = a.before;
  f.check.threshold = a.after;
  f.check.message = a.summary;
  f.origin = pa.origin;
  return f;
}

json WaivedJson(const std::vector<NodeWaived>& waived) {
  json out = json::array();
  for (const NodeWaived& w : waived) {
    json changes = json::array();
    for (const WaivedChange& c : w.changes)
      changes.push_back({{"action", PlannedActionJson(c.change)},
                         {"waiver", {{"nodes", c.nodes}, {"keys", c.keys}, {"reason", c.reason},
                                     {"owner", c.owner}, {"expires", c.expires},
                                     {"origin", LocationJson(c.where)}}}});
    out.push_back({{"node", w.node}, {"changes", std::move(changes)}});
  }
  return out;
}

json StacksJson(const std::vector<StackCount>& stacks) {
  json out = json::array();
  for (const StackCount& c : stacks) {
    json stranded = json::array();
    for (const auto& r : c.stranded)
      stranded.push_back({{"id", r.id}, {"user", r.user}, {"name", r.name}, {"state", r.state}});
    out.push_back({{"stack", c.stack}, {"now", c.now}, {"after", c.after},
                   {"stranded_jobs", std::move(stranded)}});
  }
  return out;
}

std::vector<StackCount> StacksFrom(const json& j) {
  std::vector<StackCount> out;
  for (const json& e : j) {
    StackCount c;
    c.stack = e.at("stack").get<std::string>();
    c.now = e.at("now").get<int>();
    c.after = e.at("after").get<int>();
    for (const json& r : e.value("stranded_jobs", json::array()))
      c.stranded.push_back({r.value("id", ""), r.value("user", ""), r.value("name", ""),
                            r.value("state", ""), c.stack});
    out.push_back(std::move(c));
  }
  return out;
}

// The plan without its digest; "nodes" left empty when `with_nodes` is false.
json BodyJson(const Plan& plan, bool with_nodes = true) {
  json nodes = json::array();
  if (with_nodes)
    for (const NodePlan& n : plan.nodes) nodes.push_back(NodeJson(n, plan.format_version));
  json unreadable = json::array();
  for (const auto& u : plan.unreadable) unreadable.push_back({{"node", u.node}, {"reason", u.reason}});
  json rollouts = json::object();
  for (const auto& [name, p] : plan.rollouts) rollouts[name] = PolicyJson(p, plan.format_version);
  json batches = json::array();
  for (const Batch& b : plan.batches)
    batches.push_back({{"index", b.index}, {"rollout", b.rollout}, {"canary", b.canary},
                       {"nodes", b.nodes}, {"domains", b.domains}, {"budget", b.budget},
                       {"est_seconds", b.est_seconds}});
  json blocking = json::array();
  for (const auto& bj : plan.blocking_jobs) blocking.push_back({{"node", bj.node}, {"jobs", bj.jobs}});
  json states = json::object();
  for (const auto& [digest, st] : plan.desired_states) {
    json entry = st.image;
    entry["files"] = st.files;
    states[digest] = std::move(entry);
  }
  json desired = {{"states", std::move(states)}, {"files", plan.desired_files}};
  json body = {{"format_version", plan.format_version},
          {"source", {{"repo", plan.source.repo}, {"ref", plan.source.ref},
                      {"commit", plan.source.commit}, {"working_tree", plan.source.working_tree}}},
          {"cluster", plan.cluster},
          {"created_at", plan.created_at},
          {"complete", plan.complete},
          {"nodes", std::move(nodes)},
          {"in_sync", plan.in_sync},
          {"waived", WaivedJson(plan.waived)},
          {"unreadable", std::move(unreadable)},
          {"rollouts", std::move(rollouts)},
          {"batches", std::move(batches)},
          {"blocking_jobs", std::move(blocking)},
          {"peak_unavailable", plan.peak_unavailable},
          {"est_seconds", plan.est_seconds},
          {"diagnostics", plan.diags.ToJson()}};
  if (plan.format_version >= 2) body["desired"] = std::move(desired);
  if (plan.format_version >= 3) {
    body["gathered_at"] = plan.gathered_at;
    body["health"] = HealthJson(plan.health);
  }
  // Only where it applies, so every other plan (and its digest) reads as before.
  if (!plan.only_modules.empty()) body["only_modules"] = plan.only_modules;
  if (!plan.stacks.empty()) body["stacks"] = StacksJson(plan.stacks);
  return body;
}

// A plan read from a version 1 or 2 file: the file's own body.
bool ReadAsIs(const Plan& plan) { return plan.format_version < 3 && !plan.read_body.is_null(); }

}  // namespace

json PlanToJson(const Plan& plan) {
  json j = ReadAsIs(plan) ? plan.read_body : BodyJson(plan);
  j["digest"] = plan.digest;
  return j;
}

std::string ComputePlanDigest(const Plan& plan) {
  return JsonDigest(ReadAsIs(plan) ? plan.read_body : BodyJson(plan));
}

void SealPlan(Plan& plan) { plan.digest = ComputePlanDigest(plan); }

PlanFile::PlanFile(Plan& plan) : nodes_(ReadAsIs(plan) ? 0 : plan.nodes.size()) {
  if (ReadAsIs(plan)) {   // an older plan, written back as it was read (never big: a run's)
    SealPlan(plan);
    json j = plan.read_body;
    j["digest"] = plan.digest;
    head_ = j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    as_is_ = true;
    return;
  }
  // Each node's compact JSON is what the digest hashes; it is kept, not an indented copy (the
  // file's text is made from it as it is written).
  json frame = BodyJson(plan, /*with_nodes=*/false);
  ForEachRange(plan.nodes.size(), 256, [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin; i < end; ++i)
      nodes_[i] = CanonicalJson(NodeJson(plan.nodes[i], plan.format_version));
  });

  // The digest: the canonical (compact, sorted) body is `{"k":v,...}`; "nodes" is ours to fill.
  Sha256 sha;
  sha.Update("{");
  bool first = true;
  for (const auto& [key, value] : frame.items()) {
    sha.Update(first ? "" : ",");
    first = false;
    sha.Update(CanonicalJson(key));
    sha.Update(":");
    if (key != "nodes") {
      sha.Update(CanonicalJson(value));
      continue;
    }
    sha.Update("[");
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (i) sha.Update(",");
      sha.Update(nodes_[i]);
    }
    sha.Update("]");
  }
  sha.Update("}");
  plan.digest = "sha256:" + sha.Hex();

  // The file around the nodes: the frame with its digest, indented, split where its empty
  // "nodes" array is. At depth 1 a line `\n  "nodes": ` is unique (deeper keys are indented
  // more; strings escape their newlines).
  frame["digest"] = plan.digest;
  // Bytes that are not UTF-8 (a node's odd output in a reason, say) are replaced with U+FFFD
  // here as in the nodes' text and in the digest: the file is written, and reads back to the
  // digest it carries.
  const std::string text = frame.dump(2, ' ', false, json::error_handler_t::replace);
  const std::string nodes_key = "\n  \"nodes\": ";
  const size_t at = text.find(nodes_key) + nodes_key.size();   // at its "[]"
  head_ = text.substr(0, at);
  tail_ = text.substr(at + 2) + "\n";
}

void PlanFile::WriteTo(std::ostream& out) const {
  out << head_;
  if (as_is_) return;
  if (nodes_.empty()) {
    out << "[]";
  } else {
    // Indented a node at a time into a buffer written out each MB or so.
    std::string chunk = "[";
    chunk.reserve(2u << 20);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      chunk += i ? ",\n    " : "\n    ";
      AppendIndentedCompact(chunk, nodes_[i], 2);
      if (chunk.size() >= (1u << 20)) {
        out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        chunk.clear();
      }
    }
    chunk += "\n  ]";
    out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  }
  out << tail_;
}

std::string PlanFile::Text() const {
  std::ostringstream out;
  WriteTo(out);
  return std::move(out).str();
}

std::string SealPlanToFile(Plan& plan) { return PlanFile(plan).Text(); }

Status VerifyPlanDigest(const Plan& plan) {
  std::string want = ComputePlanDigest(plan);
  if (plan.digest == want) return OkStatus();
  return Diagnostic::Error("plan.tampered",
                           fmt::format("plan digest mismatch: file says {}, content hashes to {}",
                                       plan.digest.empty() ? "(none)" : plan.digest, want),
                           {}, "digest", "re-run `plumb plan --out` and review the new plan");
}

Result<Plan> PlanFromJson(const json& j) {
  // Every plan read is checked against schemas/plan.schema.json first: a field that is not
  // the plan's, of the wrong type or out of range is named, not half-read.
  if (j.is_object() && j.contains("format_version") && j["format_version"] == kPlanFormatVersion) {
    Diagnostics d;
    if (!schemas::ValidateJson(j, "plan.schema.json", "plan file", schemas::Marks{}, d)) {
      Diagnostic first = d.items().empty() ? Diagnostic::Error("plan.malformed", "invalid plan")
                                           : d.items().front();
      std::string more = d.items().size() > 1
                             ? fmt::format(" (and {} more problem(s))", d.items().size() - 1)
                             : std::string();
      return Diagnostic::Error("plan.malformed",
                               fmt::format("the plan file is not a valid plan: {}{}{}",
                                           first.key_path.empty() ? "" : first.key_path + ": ",
                                           first.message, more),
                               {}, first.key_path,
                               "a plan file is written by `plumb plan --out`; do not edit it");
    }
  }
  try {
    int version = j.at("format_version").get<int>();
    // Versions 1 (no desired-state digests) and 2 (failed health checks as actions) are still
    // read: a run an older plumb journaled resumes, a plan it made applies. Each keeps its
    // version and its own JSON (written back as it was, so its digest holds); version 1
    // applies at its own commit only.
    if (version < 1 || version > kPlanFormatVersion)
      return Diagnostic::Error("plan.version",
                               fmt::format("plan format_version {} is not supported (this plumb "
                                           "reads versions 1 to {})", version, kPlanFormatVersion),
                               {}, "format_version", "re-create the plan with this plumb");
    Plan plan;
    plan.format_version = version;
    if (version < 3) {
      // Hashed and written back as it is: its fields are read the new way below.
      plan.read_body = j;
      plan.read_body.erase("digest");
    }
    plan.gathered_at = j.value("gathered_at", "");
    const json& s = j.at("source");
    plan.source = {s.at("repo").get<std::string>(), s.at("ref").get<std::string>(),
                   s.at("commit").get<std::string>(), s.value("working_tree", false)};
    plan.cluster = j.at("cluster").get<std::string>();
    plan.created_at = j.at("created_at").get<std::string>();
    plan.complete = j.at("complete").get<bool>();
    if (j.contains("only_modules"))
      plan.only_modules = j.at("only_modules").get<std::vector<std::string>>();
    if (j.contains("stacks")) plan.stacks = StacksFrom(j.at("stacks"));
    std::vector<NodeFindings> legacy_health;
    std::vector<std::string> legacy_in_sync;
    for (const json& n : j.at("nodes")) {
      NodePlan np;
      np.node = n.at("node").get<std::string>();
      np.rollout = n.at("rollout").get<std::string>();
      np.facts_digest = n.at("facts_digest").get<std::string>();
      np.desired_digest = n.value("desired_digest", "");
      np.marker_commit = n.value("marker_commit", "");
      np.already_unavailable = n.value("already_unavailable", false);
      np.admin_drained = n.value("admin_drained", false);
      np.held_by_run = n.value("held_by_run", "");
      if (const json& l = n.value("left_drained_by", json()); l.is_object()) {
        np.left_by_run = l.at("run").get<std::string>();
        np.left_at_step = l.at("step").get<std::string>();
        np.left_reason = l.at("reason").get<std::string>();
      }
      np.return_to_service = n.value("return_to_service", false);
      np.skipped_unhealthy = n.value("skipped_unhealthy", false);
      if (np.return_to_service) np.disruption = modules::Disruption::kDrain;
      std::vector<Finding> legacy_findings;
      for (const json& aj : n.at("actions")) {
        auto pa = PlannedActionFrom(aj);
        if (!pa.ok()) return pa.error();
        // An older plan's failed health check, written as an action: a finding now, which
        // apply never carries out (the node's change goes ahead, judged after as before).
        if (version < 3 && IsLegacyCheckAction(pa->action)) {
          legacy_findings.push_back(FindingFromLegacyAction(*pa));
          continue;
        }
        np.disruption = std::max(np.disruption, pa->action.disruption);
        np.actions.push_back(std::move(*pa));
      }
      const bool only_checks = !legacy_findings.empty() && np.actions.empty() && !np.return_to_service;
      if (!legacy_findings.empty()) legacy_health.push_back({np.node, std::move(legacy_findings)});
      // Only failed checks: nothing to apply (an older plumb listed such a node, in no batch).
      if (only_checks) {
        legacy_in_sync.push_back(np.node);
        continue;
      }
      plan.nodes.push_back(std::move(np));
    }
    plan.in_sync = j.at("in_sync").get<std::vector<std::string>>();
    if (!legacy_in_sync.empty()) {
      for (std::string& n : legacy_in_sync) plan.in_sync.push_back(std::move(n));
      std::sort(plan.in_sync.begin(), plan.in_sync.end());
    }
    plan.health = std::move(legacy_health);
    for (const json& h : j.value("health", json::array())) {
      NodeFindings nf;
      nf.node = h.at("node").get<std::string>();
      for (const json& f : h.at("findings")) nf.findings.push_back(FindingFrom(f));
      plan.health.push_back(std::move(nf));
    }
    for (const json& w : j.value("waived", json::array())) {
      NodeWaived nw;
      nw.node = w.at("node").get<std::string>();
      for (const json& c : w.at("changes")) {
        auto pa = PlannedActionFrom(c.at("action"));
        if (!pa.ok()) return pa.error();
        const json& wj = c.at("waiver");
        nw.changes.push_back({std::move(*pa), wj.at("nodes").get<std::string>(),
                              wj.at("keys").get<std::string>(), wj.at("reason").get<std::string>(),
                              wj.at("owner").get<std::string>(), wj.at("expires").get<std::string>(),
                              LocationFrom(wj.at("origin"))});
      }
      plan.waived.push_back(std::move(nw));
    }
    for (const json& u : j.at("unreadable"))
      plan.unreadable.push_back({u.at("node").get<std::string>(), u.at("reason").get<std::string>()});
    for (const auto& [name, pj] : j.at("rollouts").items()) plan.rollouts[name] = PolicyFrom(pj);
    for (const json& bj : j.at("batches")) {
      Batch b;
      b.index = bj.at("index").get<int>();
      b.rollout = bj.at("rollout").get<std::string>();
      b.canary = bj.at("canary").get<bool>();
      b.nodes = bj.at("nodes").get<std::vector<std::string>>();
      b.domains = bj.at("domains").get<std::vector<std::string>>();
      b.budget = bj.at("budget").get<int>();
      b.est_seconds = bj.at("est_seconds").get<int>();
      plan.batches.push_back(std::move(b));
    }
    for (const json& bj : j.at("blocking_jobs"))
      plan.blocking_jobs.push_back({bj.at("node").get<std::string>(),
                                    bj.at("jobs").get<std::vector<std::string>>()});
    if (version >= 2) {
      const json& d = j.at("desired");
      for (const auto& [digest, entry] : d.at("states").items()) {
        DesiredState st;
        st.files = entry.value("files", std::vector<std::string>());
        st.image = entry;
        st.image.erase("files");
        plan.desired_states[digest] = std::move(st);
      }
      plan.desired_files = d.at("files").get<std::map<std::string, std::string>>();
    }
    plan.peak_unavailable = j.at("peak_unavailable").get<int>();
    plan.est_seconds = j.at("est_seconds").get<int>();
    for (const json& d : j.at("diagnostics")) {
      Diagnostic diag;
      std::string sev = d.value("severity", "error");
      diag.severity = sev == "warning" ? Severity::kWarning : sev == "note" ? Severity::kNote
                                                                           : Severity::kError;
      diag.code = d.value("code", "");
      diag.message = d.value("message", "");
      diag.key_path = d.value("key", "");
      diag.hint = d.value("hint", "");
      diag.where = LocationFrom(d);
      plan.diags.Add(std::move(diag));
    }
    plan.digest = j.value("digest", "");
    return plan;
  } catch (const std::exception& e) {
    return Diagnostic::Error("plan.malformed", std::string("malformed plan file: ") + e.what(), {},
                             {}, "a plan file is written by `plumb plan --out`; do not edit it");
  }
}

}  // namespace plumb::plans
