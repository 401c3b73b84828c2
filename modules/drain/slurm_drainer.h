#pragma once
/// SlurmDrainer: drains and resumes through Slurm's CLI (scontrol, sinfo, squeue) over a Shell:
/// a LocalShell on the host plumb runs on, or an SSH shell to a head node. Reads
/// `sinfo --json` / `squeue --json` (falling back to `scontrol show node -o` and squeue's
/// formatted output on versions or builds without JSON).
#include <chrono>

#include "modules/drain/drainer.h"
#include "modules/transport/shell.h"

namespace plumb::modules {

class SlurmDrainer final : public Drainer {
 public:
  /// `shell` must outlive the drainer and be safe to call from several threads (LocalShell is).
  explicit SlurmDrainer(transport::Shell& shell,
                        std::chrono::milliseconds timeout = std::chrono::seconds(60))
      : shell_(shell), timeout_(timeout) {}
  std::string_view Name() const override { return "slurm"; }
  Result<std::map<std::string, SchedulerNode>> Query(const std::vector<std::string>& nodes) override;
  /// `scontrol update nodename=<node> state=drain reason=<reason>` (both quoted).
  Status Drain(const std::string& node, const std::string& reason) override;
  /// `scontrol update nodename=<node> state=resume`.
  Status Resume(const std::string& node) override;
  bool SharesClaims() const override { return true; }
  /// `scontrol update nodename=<node> comment=<the comment with the claim token>`.
  Status SetClaim(const SchedulerNode& current, const NodeClaim& claim) override;
  /// Node features `stack_<stack>` and `stack_commit_<12 hex>` (modules/drain/stack_tag.h).
  bool ShowsStacks() const override { return true; }
  /// One `scontrol update nodename=<node> availablefeatures=<list> activefeatures=<list>`,
  /// the list `current.features` with plumb's replaced. Both in one command: setting only the
  /// available ones fails while the active ones are not a subset of them ("Active features not
  /// subset of available features", 22.05). Slurm keeps neither across a slurmctld restart or
  /// `scontrol reconfigure` (slurm.conf's features come back): the tag must be written again.
  /// A tag TagProblem refuses is an error before anything runs.
  Status SetStack(const SchedulerNode& current, const StackTag& tag) override;
  /// Pending and running jobs whose constraint names a `stack_` feature (`squeue --json`,
  /// falling back to squeue's formatted output).
  Result<std::vector<StackRequest>> StackRequests() override;

  /// The commands, for tests and --explain.
  static std::string DrainCommand(const std::string& node, const std::string& reason);
  static std::string ResumeCommand(const std::string& node);
  static std::string ClaimCommand(const SchedulerNode& current, const NodeClaim& claim);
  static std::string StackCommand(const SchedulerNode& current, const StackTag& tag);

 private:
  Result<transport::CommandOutput> Run(const std::string& cmd);
  transport::Shell& shell_;
  std::chrono::milliseconds timeout_;
};

}  // namespace plumb::modules
