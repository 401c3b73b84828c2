#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "plans/store/run_state.h"

using namespace plumb;

// Every value has one word and reads back from it: the journal written by one plumb is read by
// the next, and `plumb runs --format json` consumers match on these words.
TEST_CASE("run, node and step states: each word names one state and reads back") {
  using plans::RunState, plans::NodeState, plans::StepState;
  const RunState runs[] = {RunState::kRunning, RunState::kDone, RunState::kFailed,
                           RunState::kHalted, RunState::kPaused, RunState::kInterrupted,
                           RunState::kIncomplete, RunState::kCrashed};
  for (RunState s : runs) CHECK(plans::ParseRunState(plans::Name(s)) == s);
  const NodeState nodes[] = {NodeState::kRunning, NodeState::kDone, NodeState::kFailed,
                             NodeState::kStale, NodeState::kBusy, NodeState::kInterrupted,
                             NodeState::kNotStarted, NodeState::kDeferred};
  for (NodeState s : nodes) CHECK(plans::ParseNodeState(plans::Name(s)) == s);
  const StepState steps[] = {StepState::kNone, StepState::kOk, StepState::kSkipped,
                             StepState::kFailed, StepState::kInterrupted};
  for (StepState s : steps) CHECK(plans::ParseStepState(plans::Name(s)) == s);

  // The words the journal has always held (schemas/journal.md).
  CHECK(plans::Name(NodeState::kNotStarted) == "not-started");
  CHECK(plans::Name(StepState::kNone).empty());
  CHECK_FALSE(plans::ParseRunState("finished").has_value());
  CHECK_FALSE(plans::ParseNodeState("").has_value());
  CHECK_FALSE(plans::ParseStepState("OK").has_value());
}

TEST_CASE("run states: JSON and streams carry the word, not a number") {
  nlohmann::json j = {{"outcome", plans::RunState::kHalted},
                      {"status", plans::NodeState::kNotStarted},
                      {"step", plans::StepState::kSkipped}};
  CHECK(j.dump() == R"({"outcome":"halted","status":"not-started","step":"skipped"})");
  std::ostringstream os;
  os << plans::RunState::kPaused << ' ' << plans::StepState::kOk;
  CHECK(os.str() == "paused ok");
  CHECK(plans::Finished(plans::StepState::kSkipped));
  CHECK_FALSE(plans::Finished(plans::StepState::kNone));
  CHECK_FALSE(plans::Finished(plans::StepState::kInterrupted));
}
