#pragma once
/// The part of the apply session's outside world that is this machine's files and streams: the
/// plan file, an output file (--plan-out), stdout and stderr, the clock, the repo's commits.
/// cmd/apply.cc derives the real world from it and adds the rest (the repo load and plumb
/// plan's read run, the trust check, the schedulers, the prompt, the transports). Tested in
/// tests/plans/session/local_apply_world_test.cc.
#include "plans/session/apply_session.h"

namespace plumb::plans {

class LocalApplyWorld : public ApplyWorld {
 public:
  /// A plan file from `plumb plan --out`: an error names the file when it cannot be read or is
  /// not JSON; PlanFromJson's when it is not a plan.
  Result<Plan> ReadPlanFile(const std::string& path) override;
  Result<std::string> ResolveCommit(const std::string& repo, const std::string& ref) override;
  /// `text` into `path`, atomically ("" or "-": stdout).
  Status Write(const std::string& path, const std::string& text) override;
  void Err(const std::string& line) override;
  void Out(const std::string& text) override;
  std::chrono::system_clock::time_point Now() override;
};

}  // namespace plumb::plans
