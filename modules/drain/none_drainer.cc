#include "modules/drain/none_drainer.h"

namespace plumb::modules {

Result<std::map<std::string, SchedulerNode>> NoneDrainer::Query(
    const std::vector<std::string>& nodes) {
  std::lock_guard lock(mu_);
  std::map<std::string, SchedulerNode> out;
  auto add = [&](const std::string& name) {
    SchedulerNode n;
    n.name = name;
    auto it = drained_.find(name);
    n.drain = n.drained = it != drained_.end();
    n.state = n.drain ? "drained" : "in-service";
    if (n.drain) n.reason = it->second;
    out[name] = n;
  };
  for (const auto& n : nodes) add(n);
  if (nodes.empty())
    for (const auto& [n, r] : drained_) add(n);
  return out;
}

Status NoneDrainer::Drain(const std::string& node, const std::string& reason) {
  std::lock_guard lock(mu_);
  drained_[node] = reason;
  return OkStatus();
}

Status NoneDrainer::Resume(const std::string& node) {
  std::lock_guard lock(mu_);
  drained_.erase(node);
  return OkStatus();
}

}  // namespace plumb::modules
