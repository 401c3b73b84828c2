#include "plans/session/test_hooks.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <thread>

namespace plumb::plans {

std::optional<HookAt> ParseHookAt(const char* v) {
  if (!v || !*v) return std::nullopt;
  std::string spec(v);
  auto colon = spec.rfind(':');
  return HookAt{spec.substr(0, colon),
                colon == std::string::npos ? 1 : std::atoi(spec.c_str() + colon + 1)};
}

void HoldWhileFileExists(const std::string& point, int nth, const std::string& file) {
  std::fprintf(stderr, "plumb: test hook: holding at %s #%d while %s exists\n", point.c_str(), nth,
               file.c_str());
  std::fflush(stderr);
  { std::ofstream(file + ".held") << getpid() << "\n"; }
  while (access(file.c_str(), F_OK) == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

HookActions RealHookActions() {
  return {.hold = HoldWhileFileExists, .crash = [](const std::string& point, int nth) {
            std::fprintf(stderr, "plumb: test hook: crashing at %s #%d\n", point.c_str(), nth);
            std::fflush(stderr);
            kill(getpid(), SIGKILL);
          }};
}

CrashHook TestHooksFromEnv(const EnvLookup& env, HookActions actions) {
  const char* hooks = env("PLUMB_TEST_HOOKS");
  if (!hooks || std::string(hooks) != "1") return {};
  std::optional<HookAt> crash = ParseHookAt(env("PLUMB_CRASH_AT"));
  std::optional<HookAt> hold = ParseHookAt(env("PLUMB_HOLD_AT"));
  const char* hold_file = env("PLUMB_HOLD_FILE");
  if (!hold_file || !*hold_file) hold.reset();
  if (!crash && !hold) return {};
  auto crashes = std::make_shared<std::atomic<int>>(0);
  auto holds = std::make_shared<std::atomic<int>>(0);
  const std::string file = hold ? hold_file : "";
  return [crash, hold, file, crashes, holds, actions](const std::string& p) {
    if (hold && p == hold->point && ++*holds == hold->nth) actions.hold(p, hold->nth, file);
    if (crash && p == crash->point && ++*crashes == crash->nth) actions.crash(p, crash->nth);
    return false;
  };
}

}  // namespace plumb::plans
