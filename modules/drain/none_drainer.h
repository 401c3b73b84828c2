#pragma once
/// NoneDrainer: for clusters without a scheduler (`drain: { scheduler: none }`). It keeps the
/// drain state in memory so the rollout's bookkeeping (max_unavailable, drained before change)
/// holds within one run; nothing outside plumb is told.
#include <mutex>

#include "modules/drain/drainer.h"

namespace plumb::modules {

class NoneDrainer final : public Drainer {
 public:
  std::string_view Name() const override { return "none"; }
  /// Every asked-for node, available unless this drainer drained it.
  Result<std::map<std::string, SchedulerNode>> Query(const std::vector<std::string>& nodes) override;
  Status Drain(const std::string& node, const std::string& reason) override;
  Status Resume(const std::string& node) override;

 private:
  std::mutex mu_;
  std::map<std::string, std::string> drained_;   // node -> reason
};

}  // namespace plumb::modules
