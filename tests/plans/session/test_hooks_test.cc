// The integration tests' crash and hold hooks (plans/session/test_hooks.h): honoured only with
// PLUMB_TEST_HOOKS=1, each at its point's n-th time and only then.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "plans/session/test_hooks.h"

using plumb::plans::CrashHook;
using plumb::plans::EnvLookup;
using plumb::plans::HookActions;
using plumb::plans::HoldWhileFileExists;
using plumb::plans::ParseHookAt;
using plumb::plans::TestHooksFromEnv;

namespace {

struct HookEnv {
  std::map<std::string, std::string> vars;
  EnvLookup Lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

struct HookRecorder {
  std::vector<std::string> holds, crashes;
  HookActions Actions() {
    return {.hold = [this](const std::string& p, int n, const std::string& f) {
              holds.push_back(p + "#" + std::to_string(n) + " " + f);
            },
            .crash = [this](const std::string& p, int n) {
              crashes.push_back(p + "#" + std::to_string(n));
            }};
  }
};

}  // namespace

TEST_CASE("test_hooks: a point and its count") {
  CHECK_FALSE(ParseHookAt(nullptr));
  CHECK_FALSE(ParseHookAt(""));
  auto a = ParseHookAt("apply.intent:3");
  REQUIRE(a);
  CHECK(a->point == "apply.intent");
  CHECK(a->nth == 3);
  auto b = ParseHookAt("reboot.outcome");
  REQUIRE(b);
  CHECK(b->point == "reboot.outcome");
  CHECK(b->nth == 1);
}

TEST_CASE("test_hooks: nothing without PLUMB_TEST_HOOKS=1") {
  HookRecorder r;
  HookEnv env{{{"PLUMB_CRASH_AT", "apply.intent:1"}}};
  CHECK_FALSE(TestHooksFromEnv(env.Lookup(), r.Actions()));
  env.vars["PLUMB_TEST_HOOKS"] = "yes";
  CHECK_FALSE(TestHooksFromEnv(env.Lookup(), r.Actions()));
  HookEnv no_hook{{{"PLUMB_TEST_HOOKS", "1"}}};
  CHECK_FALSE(TestHooksFromEnv(no_hook.Lookup(), r.Actions()));
}

TEST_CASE("test_hooks: the crash comes at its point's n-th time only") {
  HookRecorder r;
  HookEnv env{{{"PLUMB_TEST_HOOKS", "1"}, {"PLUMB_CRASH_AT", "apply.intent:2"}}};
  CrashHook hook = TestHooksFromEnv(env.Lookup(), r.Actions());
  REQUIRE(hook);
  CHECK_FALSE(hook("apply.intent"));
  CHECK_FALSE(hook("drain.intent"));
  CHECK(r.crashes.empty());
  CHECK_FALSE(hook("apply.intent"));
  CHECK(r.crashes == std::vector<std::string>{"apply.intent#2"});
  hook("apply.intent");
  CHECK(r.crashes.size() == 1);
  CHECK(r.holds.empty());
}

TEST_CASE("test_hooks: a hold needs its file; with it, it holds at its point's n-th time") {
  HookRecorder r;
  HookEnv env{{{"PLUMB_TEST_HOOKS", "1"}, {"PLUMB_HOLD_AT", "reboot.outcome"}}};
  CHECK_FALSE(TestHooksFromEnv(env.Lookup(), r.Actions()));   // no PLUMB_HOLD_FILE
  env.vars["PLUMB_HOLD_FILE"] = "/tmp/hold";
  CrashHook hook = TestHooksFromEnv(env.Lookup(), r.Actions());
  REQUIRE(hook);
  hook("apply.intent");
  hook("reboot.outcome");
  hook("reboot.outcome");
  CHECK(r.holds == std::vector<std::string>{"reboot.outcome#1 /tmp/hold"});
  CHECK(r.crashes.empty());
}

TEST_CASE("test_hooks: the real hold says it holds in F.held and ends once F is gone") {
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("plumb-hold-" + std::to_string(getpid()))).string();
  std::filesystem::remove(file);
  std::filesystem::remove(file + ".held");
  HoldWhileFileExists("apply.intent", 1, file);   // F absent: returns at once
  std::ifstream held(file + ".held");
  REQUIRE(held);
  long pid = 0;
  held >> pid;
  CHECK(pid == getpid());
  std::filesystem::remove(file + ".held");
}
