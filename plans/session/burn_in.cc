#include "plans/session/burn_in.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "modules/check_result.h"
#include "plans/core/command_output.h"

namespace plumb::plans {

std::string KeptHealthPath(const std::string& dir, const std::string& node) {
  return dir + "/nodes/" + node + ".json";
}

nlohmann::json KeptHealthRecord(const NodeHealth& h, const std::string& commit, int level,
                                const std::string& checked_at) {
  return {{"commit", commit}, {"dcgm_level", level}, {"checked_at", checked_at},
          {"health", h.ToJson()}};
}

std::optional<NodeHealth> KeptHealth(const std::string& dir, const std::string& node,
                                     const std::string& commit, int level) {
  std::ifstream in(KeptHealthPath(dir, node));
  if (!in) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object() || j.value("commit", "") != commit || j.value("dcgm_level", -1) != level ||
      !j.contains("health"))
    return std::nullopt;
  auto h = NodeHealth::FromJson(j["health"]);
  if (!h || h->node != node || h->Verdict() == modules::CheckStatus::kFail) return std::nullopt;
  return h;
}

nlohmann::json BurnInDesired(nlohmann::json want, int level) {
  if (want.contains(nlohmann::json::json_pointer("/health/dcgm")) &&
      want["health"]["dcgm"].is_object()) {
    want["health"]["dcgm"]["level"] = level;
    want["health"]["dcgm"].erase("timeout_s");
  }
  return want;
}

BurnIn PlanBurnIn(const std::vector<std::string>& nodes, const inventory::LoadedCluster& loaded,
                  const SchedulerView& view, const BurnInOptions& o) {
  BurnIn b;
  for (const std::string& name : nodes) {
    const inventory::Node* node = loaded.cluster.FindNode(name);
    auto d = loaded.desired.find(name);
    if (!node || d == loaded.desired.end()) continue;
    if (o.reuse_kept)
      if (auto kept = KeptHealth(o.dir, name, o.commit, o.level)) {
        b.kept.push_back(std::move(*kept));
        continue;
      }
    b.desired[name] = BurnInDesired(*d->second.desired, o.level);
    b.targets.push_back({node, &b.desired[name], o.allow_busy ? "" : BusyReason(view, name)});
  }
  return b;
}

std::optional<report::AcceptanceSaid> PrepareBurnInDir(const std::string& dir, int level,
                                                       int timeout_s, int fanout) {
  if (dir.empty())
    return report::AcceptanceSaid{Outcome::kRefused, "",
                                  "error: --out DIR is required (the report's directory)\n"};
  if (level < 1 || level > 4 || timeout_s < 1 || fanout < 1)
    return report::AcceptanceSaid{
        Outcome::kRefused, "", "error: --dcgm-level takes 1-4; --timeout and --health-fanout at least 1\n"};
  std::error_code ec;
  std::filesystem::create_directories(dir + "/nodes", ec);
  if (ec)
    return report::AcceptanceSaid{Outcome::kError, "",
                                  "error: cannot create " + dir + "/nodes: " + ec.message() + "\n"};
  return std::nullopt;
}

std::string OperatorName(const std::string& given, const EnvLookup& env) {
  if (!given.empty()) return given;
  std::string login = EnvLoginName(env);
  return login.empty() ? "unknown" : login;
}

std::vector<NodeHealth> RunBurnIn(BurnIn& burn, const BurnInOptions& o, ShellFactory& shells,
                                  const std::vector<const modules::Module*>& modules, int fanout,
                                  std::chrono::seconds timeout, const BurnInIo& io) {
  std::vector<NodeHealth> health = std::move(burn.kept);
  if (!health.empty())
    io.say(fmt::format("acceptance: {} node(s) already checked at commit {:.12} (level {}) in {}; "
                       "--fresh runs them again",
                       health.size(), o.commit, o.level, o.dir));
  std::vector<NodeHealth> ran = RunHealth(
      burn.targets, shells, modules, fanout, timeout,
      [&](const NodeHealth& h, size_t done, size_t total) {
        if (h.reachable) {
          const nlohmann::json keep = KeptHealthRecord(h, o.commit, o.level, io.now());
          if (Status s = io.write(KeptHealthPath(o.dir, h.node), JsonText(keep)); !s.ok())
            io.say("warning: " + s.error().ToString());
        }
        io.say(fmt::format("acceptance: health {}/{}: {} {}", done, total, h.node,
                           modules::CheckStatusName(h.Verdict())));
      });
  for (NodeHealth& h : ran) health.push_back(std::move(h));
  return health;
}

}  // namespace plumb::plans
