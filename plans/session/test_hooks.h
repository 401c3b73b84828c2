#pragma once
/// The integration tests' hooks into a run, honoured only with PLUMB_TEST_HOOKS=1 (a stray
/// variable in production does nothing), at each point the engine names ("apply.intent",
/// "reboot.outcome"...; plans/rollout/rollout.h's CrashHook):
///   PLUMB_CRASH_AT=<point>:<n>   kill plumb -9 the n-th time <point> is reached;
///   PLUMB_HOLD_AT=<point>:<n> with PLUMB_HOLD_FILE=F   the n-th time <point> is reached, create
///       F.held and wait there while F exists: the test holds the run at a known state (an
///       admin's move between two steps) instead of racing it.
/// Tested in tests/plans/session/test_hooks_test.cc.
#include <functional>
#include <optional>
#include <string>

#include "plans/rollout/rollout.h"
#include "plans/store/run_who.h"

namespace plumb::plans {

/// A point and which time it is reached there: "apply.intent:2" (no ":n": the first).
struct HookAt {
  std::string point;
  int nth = 1;
};
std::optional<HookAt> ParseHookAt(const char* spec);

/// What a hook does when its time comes.
struct HookActions {
  /// Holds the run at `point` (its `nth` time) while `file` exists.
  std::function<void(const std::string& point, int nth, const std::string& file)> hold;
  /// Ends the process at `point` at once, as a crash would.
  std::function<void(const std::string& point, int nth)> crash;
};

/// The real ones: the hold writes F.held (this pid) and polls F; the crash kills this process
/// with SIGKILL. Each says so on stderr first.
HookActions RealHookActions();

/// The hook the variables of `env` ask for, or an empty one (no PLUMB_TEST_HOOKS=1, no hook).
CrashHook TestHooksFromEnv(const EnvLookup& env, HookActions actions = RealHookActions());

/// The hold: writes `file`.held (this process's pid) and waits while `file` exists.
void HoldWhileFileExists(const std::string& point, int nth, const std::string& file);

}  // namespace plumb::plans
