#pragma once
/// Pure parsers for Slurm's CLI output (tested on captured outputs in tests/data/slurm/).
/// Slurm 22.05 (Debian 12) speaks OpenAPI v0.0.38 in `sinfo --json` / `squeue --json`: a node's
/// `state` is a string ("mixed") with `state_flags` (["DRAIN"]); a job's `job_state` a string.
/// Slurm 23.02+ makes both arrays (["MIXED","DRAIN"], ["RUNNING"]) and wraps some numbers as
/// {"set":..,"number":..}; both shapes are read. A node's `features` is a string "a,b" in
/// 22.05 and a list of strings in newer versions (OpenAPI v0.0.41's `features: List[str]`);
/// both are read. `scontrol show node -o` is the fallback.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "modules/drain/drainer.h"
#include "schemas/result.h"

namespace plumb::modules::slurm {

/// A feature list as Slurm prints it ("gpu,stack_a"; "(null)" or "" for none) -> the features,
/// in order.
std::vector<std::string> SplitFeatures(std::string_view list);

/// `sinfo --json` -> nodes by name (jobs not filled in; features and stack tag filled in).
Result<std::map<std::string, SchedulerNode>> ParseSinfoJson(std::string_view text);
/// `scontrol show node -o` (one line per node) -> nodes by name.
Result<std::map<std::string, SchedulerNode>> ParseScontrolNodes(std::string_view text);

/// A job that occupies nodes now (running, completing, configuring, suspended).
struct ActiveJob {
  std::string id;
  std::string state;   ///< "RUNNING", "COMPLETING", ...
  std::string user;
  std::string name;
  std::vector<std::string> nodes;
  int64_t end_unix = 0;   ///< when its time limit runs out (squeue --json end_time), 0 unknown
};
/// `squeue --json` -> the jobs occupying nodes (pending and finished jobs are left out: a
/// PENDING job does not hold a node, and a drained node must not be read as "its jobs ended"
/// while one is still running or completing).
Result<std::vector<ActiveJob>> ParseSqueueJson(std::string_view text);
/// `squeue -h -o '%i|%T|%N|%u|%j'` -> the same.
Result<std::vector<ActiveJob>> ParseSqueueLines(std::string_view text);

/// `squeue --json` -> the jobs, pending or occupying nodes, whose constraint (`features`) names
/// a stack feature: one StackRequest per (job, stack). Finished jobs, which squeue lists for
/// MinJobAge after they end, are left out.
Result<std::vector<StackRequest>> ParseStackRequestsJson(std::string_view text);
/// The formatted fallback's command and its parser: `%i|%T|%u|%j|%f`, the constraint last
/// ("(null)" for none). A constraint may hold '|' (its OR), a job name rarely does: the name
/// ends at the first '|' after the user, or at the last when the constraint is "(null)".
inline constexpr const char* kStackRequestLinesCommand =
    "squeue -h -t PD,R,CG,CF,S -o '%i|%T|%u|%j|%f'";
Result<std::vector<StackRequest>> ParseStackRequestLines(std::string_view text);

/// "n[1-3,07],gpu-a" -> {"n1","n2","n3","n07","gpu-a"} (zero padding kept).
std::vector<std::string> ExpandHostlist(std::string_view list);

/// Folds `jobs` into `nodes` (running_jobs, jobs, and `drained` only when no job is left).
void AttachJobs(std::map<std::string, SchedulerNode>& nodes, const std::vector<ActiveJob>& jobs);

}  // namespace plumb::modules::slurm
