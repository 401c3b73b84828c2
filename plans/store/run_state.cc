#include "plans/store/run_state.h"

#include <array>
#include <ostream>
#include <utility>

#include <nlohmann/json.hpp>

namespace plumb::plans {
namespace {

// One table per enum: the word of each value, in enum order (checked by tests/plans/
// run_state_test.cc, which walks every value both ways).
constexpr std::array<std::pair<RunState, std::string_view>, 8> kRun{{
    {RunState::kRunning, "running"},
    {RunState::kDone, "done"},
    {RunState::kFailed, "failed"},
    {RunState::kHalted, "halted"},
    {RunState::kPaused, "paused"},
    {RunState::kInterrupted, "interrupted"},
    {RunState::kIncomplete, "incomplete"},
    {RunState::kCrashed, "crashed"},
}};
constexpr std::array<std::pair<NodeState, std::string_view>, 8> kNode{{
    {NodeState::kRunning, "running"},
    {NodeState::kDone, "done"},
    {NodeState::kFailed, "failed"},
    {NodeState::kStale, "stale"},
    {NodeState::kBusy, "busy"},
    {NodeState::kInterrupted, "interrupted"},
    {NodeState::kNotStarted, "not-started"},
    {NodeState::kDeferred, "deferred"},
}};
constexpr std::array<std::pair<StepState, std::string_view>, 5> kStep{{
    {StepState::kNone, ""},
    {StepState::kOk, "ok"},
    {StepState::kSkipped, "skipped"},
    {StepState::kFailed, "failed"},
    {StepState::kInterrupted, "interrupted"},
}};

template <typename E, size_t N>
std::string_view NameIn(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [v, w] : table)
    if (v == e) return w;
  return "?";
}

template <typename E, size_t N>
std::optional<E> ParseIn(const std::array<std::pair<E, std::string_view>, N>& table,
                         std::string_view word) {
  for (const auto& [v, w] : table)
    if (w == word) return v;
  return std::nullopt;
}

}  // namespace

std::string_view Name(RunState s) { return NameIn(kRun, s); }
std::string_view Name(NodeState s) { return NameIn(kNode, s); }
std::string_view Name(StepState s) { return NameIn(kStep, s); }
std::optional<RunState> ParseRunState(std::string_view w) { return ParseIn(kRun, w); }
std::optional<NodeState> ParseNodeState(std::string_view w) { return ParseIn(kNode, w); }
std::optional<StepState> ParseStepState(std::string_view w) { return ParseIn(kStep, w); }

std::ostream& operator<<(std::ostream& os, RunState s) { return os << Name(s); }
std::ostream& operator<<(std::ostream& os, NodeState s) { return os << Name(s); }
std::ostream& operator<<(std::ostream& os, StepState s) { return os << Name(s); }

void to_json(nlohmann::json& j, RunState s) { j = std::string(Name(s)); }
void to_json(nlohmann::json& j, NodeState s) { j = std::string(Name(s)); }
void to_json(nlohmann::json& j, StepState s) { j = std::string(Name(s)); }

}  // namespace plumb::plans
