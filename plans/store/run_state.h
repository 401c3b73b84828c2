#pragma once
/// The outcomes of an apply, as types: a run's, a node's in a run, a step's. The journal keeps
/// them as the words below (schemas/journal.md), `plumb runs`/`history`/the audit export print
/// those words, and the exit code of `plumb apply` follows from a RunState
/// (schemas/exit_codes.h). Nothing compares outcome strings: parse once at the journal's edge.
#include <iosfwd>
#include <optional>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace plumb::plans {

/// How a run stands or ended.
enum class RunState {
  kRunning,       ///< "running": in progress, or its owner died (plumb runs tells which)
  kDone,          ///< "done": every node done
  kFailed,        ///< "failed": some failed, the rest done; or the journal could not be written
  kHalted,        ///< "halted": canary failure, max_failures, or no budget
  kPaused,        ///< "paused": window closed, or the scheduler unreadable past its timeout
  kInterrupted,   ///< "interrupted": Ctrl-C / SIGTERM
  kIncomplete,    ///< "incomplete": some nodes stale or busy
  kCrashed,       ///< "crashed": the crash test hook fired (never journaled: the process "died")
};

/// Where one node stands in one run.
enum class NodeState {
  kRunning,      ///< "running"
  kDone,         ///< "done"
  kFailed,       ///< "failed": stays drained with plumb's failure reason
  kStale,        ///< "stale": its facts changed since the plan
  kBusy,         ///< "busy": another run holds it; left alone
  kInterrupted,  ///< "interrupted"
  kNotStarted,   ///< "not-started"
  /// "deferred": gave way to an older claim on the budget, untouched and back in service; the
  /// engine admits it again later. Never the end of a node (the journal shows it "running").
  kDeferred,
};

/// What one journaled step came to.
enum class StepState {
  kNone,          ///< "": an intent with no outcome (the process died during the step)
  kOk,            ///< "ok"
  kSkipped,       ///< "skipped": nothing to do (already so, or left to someone else)
  kFailed,        ///< "failed"
  kInterrupted,   ///< "interrupted": stopped before it finished; --resume re-checks it
};

std::string_view Name(RunState s);
std::string_view Name(NodeState s);
std::string_view Name(StepState s);

/// The inverse of Name; nullopt for a word that is not one of them.
std::optional<RunState> ParseRunState(std::string_view word);
std::optional<NodeState> ParseNodeState(std::string_view word);
std::optional<StepState> ParseStepState(std::string_view word);

/// In JSON (plumb runs --format json, the audit export) a state is its word, never a number.
void to_json(nlohmann::json& j, RunState s);
void to_json(nlohmann::json& j, NodeState s);
void to_json(nlohmann::json& j, StepState s);

/// Its word, for test failure messages and logs.
std::ostream& operator<<(std::ostream& os, RunState s);
std::ostream& operator<<(std::ostream& os, NodeState s);
std::ostream& operator<<(std::ostream& os, StepState s);

/// A step that needs no redoing on --resume: ok or skipped.
inline bool Finished(StepState s) { return s == StepState::kOk || s == StepState::kSkipped; }

}  // namespace plumb::plans
