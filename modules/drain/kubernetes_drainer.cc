#include "modules/drain/kubernetes_drainer.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "modules/apply_util.h"
#include "modules/parse_util.h"

namespace plumb::modules {
namespace kube {

using nlohmann::json;

namespace {
// A string at metadata.labels[key] ("" when absent or not a string).
std::string Label(const json& obj, std::string_view key) {
  const json* labels = nullptr;
  if (auto m = obj.find("metadata"); m != obj.end() && m->is_object())
    if (auto l = m->find("labels"); l != m->end() && l->is_object()) labels = &*l;
  if (!labels) return {};
  auto v = labels->find(std::string(key));
  return v != labels->end() && v->is_string() ? v->get<std::string>() : std::string();
}
}  // namespace

Result<std::map<std::string, SchedulerNode>> ParseNodes(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("items") || !j["items"].is_array())
    return Diagnostic::Error("kube.parse", "kubectl get nodes: not a JSON list");
  std::map<std::string, SchedulerNode> out;
  for (const auto& it : j["items"]) {
    SchedulerNode n;
    n.name = it.value("/metadata/name"_json_pointer, "");
    if (n.name.empty()) continue;
    n.drain = it.value("/spec/unschedulable"_json_pointer, false);
    n.drained = n.drain;
    // plumb's reason counts only on a cordoned node: `kubectl uncordon` leaves annotations, so
    // one on a schedulable node is stale (an admin returned a failed node), and must not make
    // that admin's later cordon look like plumb's.
    if (n.drain)
      n.reason = it.value(json::json_pointer("/metadata/annotations/" +
                                             std::string("plumb.dev~1drain-reason")),
                          "");
    n.comment = it.value(json::json_pointer("/metadata/annotations/plumb.dev~1claim"), "");
    n.claim = FindClaim(n.comment);
    n.stack_tag = {Label(it, kKubeStackLabel), Label(it, kKubeCommitLabel)};
    bool ready = false;
    if (auto c = it.find("status"); c != it.end() && c->contains("conditions"))
      for (const auto& cond : (*c)["conditions"])
        if (cond.value("type", "") == "Ready") ready = cond.value("status", "") == "True";
    n.down = !ready;
    n.state = std::string(ready ? "Ready" : "NotReady") + (n.drain ? ",SchedulingDisabled" : "");
    out[n.name] = n;
  }
  return out;
}

bool Budget::Selects(const std::string& pod_ns, const json& labels) const {
  if (pod_ns != ns || !selector.is_object()) return false;
  auto label = [&](const std::string& key) -> const json* {
    if (!labels.is_object()) return nullptr;
    auto it = labels.find(key);
    return it == labels.end() ? nullptr : &*it;
  };
  if (auto m = selector.find("matchLabels"); m != selector.end() && m->is_object())
    for (auto it = m->begin(); it != m->end(); ++it) {
      const json* have = label(it.key());
      if (!have || *have != it.value()) return false;
    }
  if (auto e = selector.find("matchExpressions"); e != selector.end() && e->is_array())
    for (const auto& req : *e) {
      const std::string key = req.value("key", ""), op = req.value("operator", "");
      const json* have = label(key);
      bool in = false;
      if (have && req.contains("values") && req["values"].is_array())
        for (const auto& v : req["values"]) in |= v == *have;
      const bool ok = op == "In"             ? in
                      : op == "NotIn"        ? !in
                      : op == "Exists"       ? have != nullptr
                      : op == "DoesNotExist" ? have == nullptr
                                             : false;   // an operator the API would refuse
      if (!ok) return false;
    }
  return true;
}

Result<std::vector<Budget>> ParseBudgets(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("items") || !j["items"].is_array())
    return Diagnostic::Error("kube.parse", "kubectl get poddisruptionbudgets: not a JSON list");
  std::vector<Budget> out;
  for (const auto& it : j["items"]) {
    Budget b;
    b.ns = it.value("/metadata/namespace"_json_pointer, "");
    b.name = it.value("/metadata/name"_json_pointer, "");
    if (auto sel = it.find("spec"); sel != it.end() && sel->contains("selector"))
      b.selector = (*sel)["selector"];
    const json allowed = it.value("/status/disruptionsAllowed"_json_pointer, json());
    if (allowed.is_number_integer()) b.disruptions_allowed = allowed.get<int64_t>();
    out.push_back(std::move(b));
  }
  return out;
}

Status AttachPods(std::map<std::string, SchedulerNode>& nodes, std::string_view text,
                  const std::vector<Budget>* budgets) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("items") || !j["items"].is_array())
    return Diagnostic::Error("kube.parse", "kubectl get pods: not a JSON list");
  for (const auto& p : j["items"]) {
    const std::string node = p.value("/spec/nodeName"_json_pointer, "");
    auto it = nodes.find(node);
    if (it == nodes.end()) continue;
    const std::string phase = p.value("/status/phase"_json_pointer, "");
    if (phase != "Running" && phase != "Pending") continue;
    bool daemon = false;
    if (auto refs = p.find("metadata"); refs != p.end() && refs->contains("ownerReferences"))
      for (const auto& r : (*refs)["ownerReferences"]) daemon |= r.value("kind", "") == "DaemonSet";
    if (p.contains(json::json_pointer("/metadata/annotations/kubernetes.io~1config.mirror")))
      daemon = true;
    if (daemon) continue;
    ++it->second.running_jobs;
    const std::string ns = p.value("/metadata/namespace"_json_pointer, "");
    std::string job = ns + "/" + p.value("/metadata/name"_json_pointer, "");
    // The eviction API checks the budget only for a running pod that is not terminating
    // (Pending ones and those being deleted go without it, since Kubernetes 1.21).
    if (budgets && phase == "Running" && !p.contains(json::json_pointer("/metadata/deletionTimestamp"))) {
      const json labels = p.value("/metadata/labels"_json_pointer, json::object());
      for (const Budget& b : *budgets)
        if (b.disruptions_allowed == 0 && b.Selects(ns, labels)) {
          job += fmt::format(" (PodDisruptionBudget {}/{} allows no eviction now)", b.ns, b.name);
          break;
        }
    }
    it->second.jobs.push_back(std::move(job));
  }
  for (auto& [name, n] : nodes)
    if (n.running_jobs > 0) n.drained = false;
  return OkStatus();
}

Result<std::vector<StackRequest>> ParseStackRequests(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("items") || !j["items"].is_array())
    return Diagnostic::Error("kube.parse", "kubectl get pods: not a JSON list");
  std::vector<StackRequest> out;
  for (const auto& p : j["items"]) {
    if (!p.is_object()) continue;
    const std::string phase = p.value("/status/phase"_json_pointer, "");
    if (phase != "Pending" && phase != "Running") continue;
    std::vector<std::string> stacks;
    auto add = [&](const json& v) {
      if (v.is_string() && !v.get<std::string>().empty() &&
          std::find(stacks.begin(), stacks.end(), v.get<std::string>()) == stacks.end())
        stacks.push_back(v.get<std::string>());
    };
    const json spec = p.value("spec", json::object());
    if (auto sel = spec.find("nodeSelector"); sel != spec.end() && sel->is_object())
      if (auto s = sel->find(kKubeStackLabel); s != sel->end()) add(*s);
    // Terms are ORed, so every stack any of them names can place the pod.
    const json terms = spec.value(
        "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms"_json_pointer,
        json::array());
    for (const auto& t : terms.is_array() ? terms : json::array()) {
      if (!t.is_object() || !t.contains("matchExpressions") || !t["matchExpressions"].is_array()) continue;
      for (const auto& e : t["matchExpressions"])
        if (e.is_object() && e.value("key", "") == kKubeStackLabel && e.value("operator", "") == "In" &&
            e.contains("values") && e["values"].is_array())
          for (const auto& v : e["values"]) add(v);
    }
    const std::string ns = p.value("/metadata/namespace"_json_pointer, "");
    const std::string name = p.value("/metadata/name"_json_pointer, "");
    for (auto& s : stacks) out.push_back({ns + "/" + name, ns, name, phase, std::move(s)});
  }
  return out;
}

}  // namespace kube

namespace {

// Every call: kubectl waits forever for a server that holds a request unless told otherwise.
constexpr const char* kKubectl = "kubectl --request-timeout=30s";

// kubectl's and client-go's words for "the API server cannot be reached or cannot answer now":
// a call that failed this way did not fail because of the node, and must not count against it.
bool ApiUnreachable(std::string_view text) {
  for (std::string_view w :
       {"Unable to connect to the server", "ServiceUnavailable", "connection refused",
        "the server is currently unable to handle the request", "Client.Timeout exceeded",
        "context deadline exceeded", "i/o timeout", "TLS handshake timeout",
        "the server was unable to return a response", "Timeout: request did not complete",
        "http2: client connection lost", "connection reset by peer"})
    if (text.find(w) != std::string_view::npos) return true;
  // A connection closed mid-request: client-go says `Get "https://host:6443/...": EOF` (or
  // "unexpected EOF"). Only an HTTP request's EOF counts, not a truncated kubeconfig's.
  for (std::string_view line : Split(text, "\n")) {
    const bool request = line.find("\"https://") != std::string_view::npos ||
                         line.find("\"http://") != std::string_view::npos;
    if (request && line.find("EOF") != std::string_view::npos) return true;
  }
  return false;
}

// The last `n` bytes of `s`, not starting inside a UTF-8 sequence.
std::string TailBytes(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  size_t from = s.size() - n;
  while (from < s.size() && (static_cast<unsigned char>(s[from]) & 0xC0) == 0x80) ++from;
  return s.substr(from);
}

Status CheckKubectl(const Result<transport::CommandOutput>& r, const std::string& cmd) {
  if (!r)
    return Diagnostic::Error(std::string(kSchedulerUnavailable),
                             fmt::format("kubernetes unavailable: {}: {}", cmd, r.error().message));
  if (r->exit_status == 0) return OkStatus();
  // stderr is kubectl's error; stdout (a listing, say) is never the message, but its last
  // lines are worth a look when stderr is empty.
  std::string err = r->err;
  while (!err.empty() && err.back() == '\n') err.pop_back();
  // Only kubectl's own error says the server is gone (a listing on stdout may quote anything).
  if (ApiUnreachable(err))
    return Diagnostic::Error(std::string(kSchedulerUnavailable),
                             fmt::format("kubernetes unavailable: {}: {}", cmd, err), {}, {},
                             "is the API server up? (kubectl cluster-info)");
  if (err.empty()) {
    std::string tail = r->out.size() > 400 ? "..." + TailBytes(r->out, 400) : r->out;
    tail = TailLines(tail, 3);
    while (!tail.empty() && tail.back() == '\n') tail.pop_back();
    err = tail.empty() ? "(no error output)" : "(no error output; its output ends: " + tail + ")";
  }
  return Diagnostic::Error("kube.command", fmt::format("{}: exit {}: {}", cmd, r->exit_status, err));
}
}  // namespace

Result<std::map<std::string, SchedulerNode>> KubernetesDrainer::Query(
    const std::vector<std::string>& want) {
  auto n = shell_.Run(std::string(kKubectl) + " get nodes -o json", timeout_);
  if (Status s = CheckKubectl(n, "kubectl get nodes"); !s) return s.error();
  auto nodes = kube::ParseNodes(n->out);
  if (!nodes) return nodes.error();
  auto p = shell_.Run(std::string(kKubectl) +
                          " get pods -A -o json --field-selector=status.phase!=Succeeded,"
                          "status.phase!=Failed",
                      timeout_);
  if (Status s = CheckKubectl(p, "kubectl get pods"); !s) return s.error();
  std::optional<std::vector<kube::Budget>> budgets;
  if (budgets_ == BudgetReads::kRead) {
    auto b = shell_.Run(std::string(kKubectl) + " get poddisruptionbudgets -A -o json", timeout_);
    if (Status s = CheckKubectl(b, "kubectl get poddisruptionbudgets"); !s) return s.error();
    auto parsed = kube::ParseBudgets(b->out);
    if (!parsed) return parsed.error();
    budgets = std::move(*parsed);
  }
  if (Status s = kube::AttachPods(*nodes, p->out, budgets ? &*budgets : nullptr); !s)
    return s.error();
  if (want.empty()) return nodes;
  std::set<std::string> keep(want.begin(), want.end());
  std::map<std::string, SchedulerNode> out;
  for (auto& [name, node] : *nodes)
    if (keep.count(name)) out[name] = node;
  return out;
}

std::vector<std::string> KubernetesDrainer::DrainCommands(const std::string& node,
                                                          const std::string& reason) {
  const std::string q = transport::ShellQuote(node);
  // Cordon first: a crash between the two leaves a cordon without plumb's reason, which reads
  // as an admin's (left alone), never plumb's reason on a node nobody cordoned.
  const std::string k(kKubectl);
  return {k + " cordon " + q,
          k + " annotate node " + q + " --overwrite " +
              transport::ShellQuote(std::string(kKubeReasonAnnotation) + "=" + reason)};
}

std::string KubernetesDrainer::EvictCommand(const std::string& node) {
  // --timeout bounds one attempt (kubectl retries a 429 every 5 s within it); the run's poll
  // calls again. No --force: a pod no controller recreates is never deleted by plumb.
  return std::string(kKubectl) + " drain " + transport::ShellQuote(node) +
         " --ignore-daemonsets --delete-emptydir-data --timeout=6s";
}

std::vector<std::string> KubernetesDrainer::ResumeCommands(const std::string& node) {
  const std::string q = transport::ShellQuote(node);
  const std::string k(kKubectl);
  return {k + " uncordon " + q,
          k + " annotate node " + q + " " + transport::ShellQuote(std::string(kKubeReasonAnnotation) + "-")};
}

Status KubernetesDrainer::Drain(const std::string& node, const std::string& reason) {
  for (const auto& c : DrainCommands(node, reason))
    if (Status s = CheckKubectl(shell_.Run(c, timeout_), c); !s) return s;
  return OkStatus();
}

Status KubernetesDrainer::Evict(const std::string& node) {
  // A non-zero exit is the usual case while a budget refuses or a pod is still terminating:
  // the caller's next Query says what is left. Only "cannot run kubectl at all" is an error.
  const std::string c = EvictCommand(node);
  if (Status s = CheckKubectl(shell_.Run(c, timeout_), c); !s && s.error().code == kSchedulerUnavailable)
    return s;
  return OkStatus();
}

std::string KubernetesDrainer::ClaimCommand(const std::string& node, const NodeClaim& claim) {
  const std::string a(kKubeClaimAnnotation);
  if (claim.run.empty())
    return std::string(kKubectl) + " annotate node " + transport::ShellQuote(node) + " " +
           transport::ShellQuote(a + "-");
  return std::string(kKubectl) + " annotate node " + transport::ShellQuote(node) + " --overwrite " +
         transport::ShellQuote(fmt::format("{}={}@{}", a, claim.run, claim.since));
}

Status KubernetesDrainer::SetClaim(const SchedulerNode& current, const NodeClaim& claim) {
  const std::string c = ClaimCommand(current.name, claim);
  return CheckKubectl(shell_.Run(c, timeout_), c);
}

std::string KubernetesDrainer::StackCommand(const std::string& node, const StackTag& tag) {
  auto part = [](const char* key, const std::string& value) {
    return transport::ShellQuote(value.empty() ? std::string(key) + "-" : std::string(key) + "=" + value);
  };
  // --overwrite only replaces these two keys' values; removal needs no flag.
  return std::string(kKubectl) + " label node " + transport::ShellQuote(node) +
         (tag.empty() ? "" : " --overwrite") + " " + part(kKubeStackLabel, tag.stack) + " " +
         part(kKubeCommitLabel, tag.commit);
}

Status KubernetesDrainer::SetStack(const SchedulerNode& current, const StackTag& tag) {
  if (std::string p = TagProblem(tag); !p.empty())
    return Diagnostic::Error("kube.stack", fmt::format("node {}: stack tag {}: {}", current.name,
                                                       TagText(tag), p));
  const std::string c = StackCommand(current.name, tag);
  return CheckKubectl(shell_.Run(c, timeout_), c);
}

Result<std::vector<StackRequest>> KubernetesDrainer::StackRequests() {
  const std::string c = std::string(kKubectl) +
                        " get pods -A -o json --field-selector=status.phase!=Succeeded,"
                        "status.phase!=Failed";
  auto p = shell_.Run(c, timeout_);
  if (Status s = CheckKubectl(p, "kubectl get pods"); !s) return s.error();
  return kube::ParseStackRequests(p->out);
}

Status KubernetesDrainer::Resume(const std::string& node) {
  for (const auto& c : ResumeCommands(node))
    if (Status s = CheckKubectl(shell_.Run(c, timeout_), c); !s) return s;
  return OkStatus();
}

}  // namespace plumb::modules
