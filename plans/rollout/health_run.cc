#include "plans/rollout/health_run.h"

#include <algorithm>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "plans/core/parallel.h"

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

std::optional<NodeHealth> NodeHealth::FromJson(const nlohmann::json& j) {
  static const std::map<std::string, CheckStatus> kStatus = {{"pass", CheckStatus::kPass},
                                                             {"skip", CheckStatus::kSkip},
                                                             {"warn", CheckStatus::kWarn},
                                                             {"fail", CheckStatus::kFail}};
  try {
    NodeHealth h;
    h.node = j.at("node").get<std::string>();
    h.reachable = j.at("reachable").get<bool>();
    h.seconds = j.at("seconds").get<double>();
    for (const auto& m : j.at("modules")) h.modules.push_back(m.get<std::string>());
    for (const auto& c : j.at("checks")) {
      auto st = kStatus.find(c.at("status").get<std::string>());
      if (st == kStatus.end()) return std::nullopt;
      h.checks.push_back({c.at("module").get<std::string>(), c.at("id").get<std::string>(),
                          c.at("name").get<std::string>(), c.at("subject").get<std::string>(),
                          st->second, c.at("measured"), c.at("threshold"),
                          c.at("message").get<std::string>()});
    }
    for (const auto& p : j.at("problems"))
      h.problems.Add(Diagnostic::Error(p.at("code").get<std::string>(), p.at("message").get<std::string>()));
    return h;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;   // not ToJson's form: the caller runs the node again
  }
}

std::vector<const modules::Module*> PinnedHealthModules(const nlohmann::json& desired,
                                                        const std::vector<const modules::Module*>& all) {
  std::vector<const modules::Module*> out;
  for (const modules::Module* m : all)
    if (m->Info().IsHealth() && m->Wants(desired)) out.push_back(m);
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

std::string BusyReason(const SchedulerView& view, const std::string& node) {
  if (!view.ok()) return "the scheduler could not be read (" + view.error + ")";
  auto it = view.nodes.find(node);
  if (it == view.nodes.end() || it->second.running_jobs == 0) return "";
  const modules::SchedulerNode& n = it->second;
  std::string jobs;
  for (size_t i = 0; i < n.jobs.size() && i < 3; ++i) jobs += (i ? ", " : ": ") + n.jobs[i];
  if (n.jobs.size() > 3) jobs += ", ...";
  return fmt::format("{} job(s) running{}", n.running_jobs, jobs);
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
      try {
        // A held node runs its cheap checks only; each on-demand one it pins is a skip, with why.
        std::vector<const modules::Module*> allowed;
        std::vector<modules::CheckResult> held;
        for (const modules::Module* m : all) {
          if (!t.hold_on_demand.empty() && m->Info().on_demand) {
            if (m->Info().IsHealth() && m->Wants(*t.desired))
              held.push_back({std::string(m->Name()), std::string(m->Name()) + ".held",
                              std::string(m->Name()), "", CheckStatus::kSkip, nullptr, nullptr,
                              "not run: " + t.hold_on_demand + " (--allow-busy runs it anyway)"});
            continue;
          }
          allowed.push_back(m);
        }
        out[i] = RunNodeHealth(t.node->name, *shell, *t.desired, allowed, timeout);
        for (modules::CheckResult& c : held) {
          out[i].modules.push_back(c.module);
          out[i].checks.push_back(std::move(c));
        }
      } catch (const std::exception& e) {   // a bug must not take the other nodes' results down
        out[i] = NodeHealth{};
        out[i].node = t.node->name;
        out[i].problems.Add(Diagnostic::Error("health.internal", t.node->name + ": " + e.what()));
      }
    }
    if (progress) {
      std::lock_guard<std::mutex> lock(progress_mu);
      try {
        progress(out[i], ++done, targets.size());
      } catch (const std::exception&) {   // the caller's reporting: never the run's end
      }
    }
  });
  return out;
}

}  // namespace plumb::plans
