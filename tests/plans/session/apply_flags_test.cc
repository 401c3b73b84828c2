// `plumb apply`'s flags as the session takes them (plans/session/apply_flags.h): every value
// carried over, the lock's bounds and the durations checked, --working-tree refused.
#include <doctest/doctest.h>

#include <unistd.h>

#include <map>
#include <string>

#include "plans/core/process_identity.h"
#include "plans/session/apply_flags.h"

using plumb::plans::ApplyFlags;
using plumb::plans::ApplyRequest;
using plumb::plans::ApplyRequestOf;
using plumb::plans::BmcWaitsOf;
using plumb::plans::EnvLookup;
using plumb::plans::HostName;
using plumb::plans::ProcessStart;
using plumb::plans::RolloutTiming;
using plumb::plans::SetRunOwner;
using plumb::plans::UserName;
using namespace std::chrono_literals;

namespace {

EnvLookup NoFlagEnv() {
  return [](const char*) -> const char* { return nullptr; };
}

}  // namespace

TEST_CASE("apply_flags: every flag lands in the request") {
  ApplyFlags a;
  a.plan_file = "plan.json";
  a.resume = true;
  a.resume_run = "r1";
  a.retry_failed = "r0";
  a.force_unlock = "r2";
  a.dead_owner = "host:12";
  a.limit = "gpu[1-3]";
  a.auto_approve = true;
  a.plan_out = "out.json";
  a.trust_from = "main~1";
  a.lock_ttl = "90s";
  a.reboot_timeout_s = 100;
  a.reboot_grace_s = 7;
  a.poll_max_ms = 250;
  a.given = {"--repo"};
  auto r = ApplyRequestOf(a, {"/repo", "v1", false, true}, NoFlagEnv());
  REQUIRE(r.ok());
  CHECK(r->plan_file == "plan.json");
  CHECK(r->resume);
  CHECK(r->resume_run == "r1");
  CHECK(r->retry_failed == "r0");
  CHECK(r->force_unlock == "r2");
  CHECK(r->dead_owner == "host:12");
  CHECK(r->limit == "gpu[1-3]");
  CHECK(r->repo == "/repo");
  CHECK(r->ref == "v1");
  CHECK(r->repo_given);
  CHECK_FALSE(r->ref_given);
  CHECK(r->auto_approve);
  CHECK(r->json);
  CHECK(r->plan_out == "out.json");
  CHECK(r->trust_from == "main~1");
  CHECK(r->lock_ttl == 90s);
  CHECK(r->timing.reboot_timeout == 100s);
  CHECK(r->timing.reboot_grace == 7s);
  CHECK(r->timing.poll_max == 250ms);
  CHECK(r->timing.heartbeat == RolloutTiming{}.heartbeat);
}

TEST_CASE("apply_flags: PLUMB_HEARTBEAT_S sets the lock's beat when positive") {
  std::map<std::string, std::string> vars = {{"PLUMB_HEARTBEAT_S", "2"}};
  EnvLookup env = [&](const char* n) -> const char* {
    auto it = vars.find(n);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  CHECK(ApplyRequestOf(ApplyFlags{}, {}, env)->timing.heartbeat == 2s);
  vars["PLUMB_HEARTBEAT_S"] = "0";
  CHECK(ApplyRequestOf(ApplyFlags{}, {}, env)->timing.heartbeat == RolloutTiming{}.heartbeat);
}

TEST_CASE("apply_flags: --working-tree is refused") {
  auto r = ApplyRequestOf(ApplyFlags{}, {".", "", true, false}, NoFlagEnv());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "apply.working-tree");
  CHECK(r.error().message == "apply never reads uncommitted files; commit them first");
}

TEST_CASE("apply_flags: --lock-ttl from 10s to 24h") {
  for (const char* bad : {"9s", "25h", "soon", ""}) {
    ApplyFlags a;
    a.lock_ttl = bad;
    auto r = ApplyRequestOf(a, {}, NoFlagEnv());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "apply.lock-ttl");
    CHECK(r.error().message == "--lock-ttl " + std::string(bad) + ": not a duration from 10s to 24h");
    CHECK(r.error().hint == "like --lock-ttl 10m (the default) or --lock-ttl 90s");
  }
  for (const char* good : {"10s", "24h", "10m"}) {
    ApplyFlags a;
    a.lock_ttl = good;
    CHECK(ApplyRequestOf(a, {}, NoFlagEnv()).ok());
  }
}

TEST_CASE("apply_flags: --task-timeout and --power-timeout are positive durations") {
  ApplyFlags a;
  auto w = BmcWaitsOf(a);
  REQUIRE(w.ok());
  CHECK(w->task == 45min);
  CHECK(w->power == 5min);
  a.power_timeout = "0s";
  auto bad = BmcWaitsOf(a);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == "cli.duration");   // as for the bmc verbs: one reading
  CHECK(bad.error().message == "--power-timeout 0s: not a duration");
  a.power_timeout = "90s";
  a.task_timeout = "later";
  CHECK_FALSE(BmcWaitsOf(a).ok());
}

TEST_CASE("apply_flags: this process owns the lock and the run; the approver from the flag or env") {
  std::map<std::string, std::string> vars = {{"PLUMB_APPROVED_BY", "carol"}};
  EnvLookup env = [&](const char* n) -> const char* {
    auto it = vars.find(n);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  ApplyRequest r;
  SetRunOwner(r, ::getpid(), env, "");
  CHECK(r.host == HostName());
  CHECK(r.pid == ::getpid());
  CHECK(r.process_start == ProcessStart(::getpid()));
  CHECK_FALSE(r.process_start.empty());
  CHECK(r.user == UserName());
  CHECK(r.who.operator_user == UserName());
  CHECK(r.who.approver == "carol");
  SetRunOwner(r, ::getpid(), env, "dave");
  CHECK(r.who.approver == "dave");
}
