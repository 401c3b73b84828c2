#include "plans/session/burn_in.h"

#include <fstream>

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

}  // namespace plumb::plans
