#include "plans/health_run.h"

#include <algorithm>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "plans/parallel.h"

namespace plumb::plans {

using modules::CheckResult;
using modules::CheckStatus;

modules::CheckStatus NodeHealth::Verdict() const {
  if (problems.HasErrors()) return CheckStatus::kFail;
  CheckStatus worst = CheckStatus::kPass;
  for (const CheckResult& c : checks) worst = std::max(worst, c.status);
  return worst;
}

std::vector<std::string> NodeHealth::FailureLines() const {
  std::vector<std::string> out;
  for (const CheckResult& c : checks) {
    if (c.status != CheckStatus::kFail) continue;
    std::string what = c.subject.empty() ? c.name : fmt::format("{} ({})", c.name, c.subject);
    out.push_back(c.message.empty() ? fmt::format("{}: {} failed", c.module, what)
                                    : fmt::format("{}: {}: {}", c.module, what, c.message));
  }
  for (const Diagnostic& d : problems.items())
    if (d.severity == Severity::kError) out.push_back(fmt::format("{}: {}", d.code, d.message));
  return out;
}

nlohmann::json NodeHealth::ToJson() const {
  nlohmann::json checks_json = nlohmann::json::array();
  for (const CheckResult& c : checks) checks_json.push_back(c.ToJson());
  nlohmann::json problems_json = nlohmann::json::array();
  for (const Diagnostic& d : problems.items())
    problems_json.push_back({{"code", d.code}, {"message", d.message}});
  return {{"node", node},
          {"reachable", reachable},
          {"verdict", modules::CheckStatusName(Verdict())},
          {"modules", modules},
          {"checks", std::move(checks_json)},
          {"problems", std::move(problems_json)},
          {"seconds", seconds}};
}

std::vector<const modules::Module*> PinnedHealthModules(const nlohmann::json& desired,
                                                        const std::vector<const modules::Module*>& all) {
  std::vector<const modules::Module*> out;
  for (const modules::Module* m : all)
    if (m->Info().kind == modules::ModuleInfo::Kind::kHealth && m->Wants(desired)) out.push_back(m);
  return out;
}

NodeHealth RunNodeHealth(const std::string& node, transport::Shell& shell,
                         const nlohmann::json& desired,
                         const std::vector<const modules::Module*>& all,
                         std::chrono::milliseconds timeout, const std::string& nonce) {
  NodeHealth h;
  h.node = node;
  const std::vector<const modules::Module*> pinned = PinnedHealthModules(desired, all);
  if (pinned.empty()) return h;
  std::vector<modules::ProbeSnippet> snippets;
  // The checks run one after the other; the round trip gets at least their own timeouts and a
  // minute, so a check's `timeout` reports (exit 124, named) before the transport gives up.
  std::chrono::milliseconds needed{std::chrono::minutes(1)};
  for (const modules::Module* m : pinned) {
    h.modules.emplace_back(m->Name());
    snippets.push_back({m, m->Info().on_demand ? m->CheckScript(desired) : m->ProbeScript()});
    needed += m->CheckTimeout(desired);
  }
  timeout = std::max(timeout, needed);
  const std::string n = nonce.empty() ? modules::NewProbeNonce() : nonce;
  auto script = modules::BuildSnippetScript(snippets, n);
  if (!script) {
    h.problems.Add(script.error());
    return h;
  }
  const auto start = std::chrono::steady_clock::now();
  auto ran = shell.Run(*script, timeout);
  h.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!ran) {
    h.reachable = false;
    h.problems.Add(Diagnostic::Error("health.unreachable",
                                     fmt::format("could not run the health checks: {}", ran.error().message)));
    return h;
  }
  modules::NodeFacts parsed = modules::ParseSnippetOutput(snippets, ran->out, n);
  h.problems.Append(parsed.problems);
  for (const modules::Module* m : pinned) {
    auto f = parsed.facts.find(std::string(m->Name()));
    if (f == parsed.facts.end()) continue;   // its section's problem is in `problems`
    for (CheckResult& c : m->Checks(desired, *f)) h.checks.push_back(std::move(c));
  }
  return h;
}

std::vector<NodeHealth> RunHealth(const std::vector<HealthTarget>& targets, ShellFactory& shells,
                                  const std::vector<const modules::Module*>& all, int fanout,
                                  std::chrono::milliseconds timeout,
                                  const HealthProgress& progress) {
  std::vector<NodeHealth> out(targets.size());
  std::mutex progress_mu;
  size_t done = 0;
  ForEachBounded(targets.size(), fanout, [&](size_t i) {
    const HealthTarget& t = targets[i];
    // A node that pins no health check is listed, not contacted.
    const bool pins_none = PinnedHealthModules(*t.desired, all).empty();
    std::unique_ptr<transport::Shell> shell = pins_none ? nullptr : shells.Open(*t.node);
    if (pins_none) {
      out[i].node = t.node->name;
    } else if (shell == nullptr) {
      out[i].node = t.node->name;
      out[i].reachable = false;
      out[i].problems.Add(Diagnostic::Error("health.unreachable", t.node->name + ": no shell for this node"));
    } else {
      out[i] = RunNodeHealth(t.node->name, *shell, *t.desired, all, timeout);
    }
    if (progress) {
      std::lock_guard<std::mutex> lock(progress_mu);
      progress(out[i], ++done, targets.size());
    }
  });
  return out;
}

}  // namespace plumb::plans
