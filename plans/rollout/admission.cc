#include "plans/rollout/admission.h"

#include <algorithm>

#include <fmt/format.h>

#include "plans/plan/drain_reason.h"

namespace plumb::plans {

BatchAdmission::BatchAdmission(std::vector<std::string> todo, std::vector<std::string> scope,
                               int limit, bool canary, std::set<std::string> drains,
                               std::string run_id)
    : queue_(todo.begin(), todo.end()), scope_(std::move(scope)), limit_(limit),
      canary_(canary), drains_(std::move(drains)), run_id_(std::move(run_id)) {}

void BatchAdmission::See(std::map<std::string, modules::SchedulerNode> view) {
  view_ = std::move(view);
}

std::vector<std::string> BatchAdmission::Out() const {
  std::set<std::string> out(holding_.begin(), holding_.end());
  for (const std::string& n : scope_)
    if (auto it = view_.find(n); it != view_.end() && it->second.Unavailable()) out.insert(n);
  return {out.begin(), out.end()};
}

BatchAdmission::Decision BatchAdmission::Next(const AdmissionGates& g) {
  using K = Decision::Kind;
  if (queue_.empty()) return {K::kEmpty, "", false, ""};
  if (g.stopping || g.scheduler_down) return {K::kStop, "", false, ""};
  if (g.failures > g.max_failures)
    return {K::kHalt, "", false,
            fmt::format("{} node(s) failed, more than max_failures ({})", g.failures,
                        g.max_failures)};
  if (canary_ && batch_failures_ > 0) return {K::kHalt, "", false, "the canary batch failed"};
  if (!g.window_open) return {K::kPause, "", false, ""};
  const std::string node = queue_.front();
  auto st = view_.find(node);
  const bool already_out = st != view_.end() && st->second.Unavailable();
  // A node already out (an admin's drain, a failed run's) costs the budget nothing more.
  const bool with_slot = drains_.count(node) > 0 && !already_out;
  if (with_slot && static_cast<int>(Out().size()) >= limit_) return {K::kWait, "", false, ""};
  queue_.pop_front();
  if (with_slot) holding_.insert(node);
  ++running_;
  return {K::kAdmit, node, with_slot, ""};
}

void BatchAdmission::Ended(const std::string& node, NodeState how) {
  holding_.erase(node);
  --running_;
  if (how == NodeState::kFailed) ++batch_failures_;
}

void BatchAdmission::Requeue(const std::string& node) {
  holding_.erase(node);
  --running_;
  queue_.push_back(node);
}

std::vector<std::string> BatchAdmission::TakeQueue() {
  std::vector<std::string> left(queue_.begin(), queue_.end());
  queue_.clear();
  return left;
}

std::string BatchAdmission::OtherRunHolding() const {
  std::string other;
  for (const std::string& n : scope_) {
    auto it = view_.find(n);
    if (it == view_.end() || !it->second.drain) continue;
    auto pr = ParsePlumbReason(it->second.reason);
    if (pr && !pr->failed && pr->run != run_id_) other = pr->run;
  }
  return other;
}

std::string BatchAdmission::BlockedReason() const {
  const std::vector<std::string> out = Out();
  return fmt::format("max_unavailable {} reached: {} node(s) out ({}); {} node(s) could not start",
                     limit_, out.size(), fmt::join(out, " "), queue_.size());
}

}  // namespace plumb::plans
