#pragma once
/// plumb's drain reasons: the scheduler's copy of where a run is with a node, readable from the
/// scheduler alone ("plumb:<run>:<step>" while working, "plumb:<run>:failed:<step>: <error>"
/// when a step failed and the node was left out of service). Slurm shows them in `sinfo -R`.
#include <optional>
#include <string>
#include <string_view>

namespace plumb::plans {

/// The drain reason for `run` at `step` ("drain", "wait-drained"...).
std::string DrainReason(const std::string& run, const std::string& step);
/// The reason a node keeps when `step` failed: the step and the error's last meaningful line
/// (what an operator needs in `sinfo -R`; the journal has the whole error), cut to fit.
std::string FailureReason(const std::string& run, const std::string& step, const std::string& error);
/// The run id in a plumb drain reason, "" when the reason is not plumb's.
std::string RunOfReason(std::string_view reason);

struct PlumbReason {
  std::string run;
  bool failed = false;   ///< "plumb:<run>:failed:<step>: <error>"
  std::string step;      ///< the step working on it, or the one that failed
  std::string error;     ///< failed only
};
/// A plumb reason taken apart; nullopt when the reason is not plumb's.
std::optional<PlumbReason> ParsePlumbReason(std::string_view reason);

/// The last line of `error` that says something (not a blank line, not a bare "exit N" or a
/// command echo), trimmed: "E: Version '550.90.07-1' for 'nvidia-driver-550' was not found".
std::string LastMeaningfulLine(std::string_view error);

}  // namespace plumb::plans
