#include "plans/store/step_name.h"

#include <doctest/doctest.h>

namespace plumb::plans {

TEST_CASE("step names: every kind's text parses back to it, as journals hold it") {
  for (StepKind k : {StepKind::kProbe, StepKind::kLease, StepKind::kClaim, StepKind::kDrain,
                     StepKind::kWaitDrained, StepKind::kReboot, StepKind::kWaitBoot,
                     StepKind::kVerify, StepKind::kHealth, StepKind::kMarker, StepKind::kResume,
                     StepKind::kUndrain}) {
    const StepName s(k);
    auto back = StepName::Parse(s.Text());
    REQUIRE(back);
    CHECK(*back == s);
  }
  // The words older journals hold: they must keep meaning the same step.
  CHECK(StepName(StepKind::kWaitBoot).Text() == "wait-boot");
  CHECK(StepName(StepKind::kWaitDrained).Text() == "wait-drained");
  CHECK(StepName::Apply("nvidia_driver.install").Text() == "apply:nvidia_driver.install");
  CHECK(StepName::Health("checks").Text() == "health:checks");
  CHECK(StepName::Task("firmware.update:BMC").Text() == "task:firmware.update:BMC");
  CHECK(StepName::Parse("task:firmware.update:BMC") == StepName::Task("firmware.update:BMC"));
  CHECK_FALSE(StepName::Parse("task"));   // a task is always some action's
  CHECK(StepName::Health("2").Text() == "health:2");
}

TEST_CASE("step names: apply names its action, health may name its check, stack what it does, the others take none") {
  auto a = StepName::Parse("apply:sysctl.set:vm.swappiness");
  REQUIRE(a);
  CHECK(a->kind() == StepKind::kApply);
  CHECK(a->arg() == "sysctl.set:vm.swappiness");   // an action id may hold ':' itself
  CHECK(a->Text() == "apply:sysctl.set:vm.swappiness");
  auto h = StepName::Parse("health:3");
  REQUIRE(h);
  CHECK(h->kind() == StepKind::kHealth);
  CHECK(h->arg() == "3");
  auto phase = StepName::Parse("health");       // the health phase, before a check starts
  REQUIRE(phase);
  CHECK(*phase == StepName(StepKind::kHealth));
  CHECK(phase->Text() == "health");
  CHECK_FALSE(StepName::Parse("apply"));        // an apply names its action
  CHECK_FALSE(StepName::Parse("apply:"));
  CHECK_FALSE(StepName::Parse("reboot:now"));   // a reboot takes no argument
  CHECK_FALSE(StepName::Parse("rebot"));        // a misspelt step is no step
  CHECK_FALSE(StepName::Parse(""));
  CHECK(StepName::Apply("a") != StepName::Apply("b"));
  CHECK(StepName(StepKind::kDrain) != StepName(StepKind::kUndrain));
  // A stack step says what it does to the scheduler's tags.
  auto st = StepName::Parse("stack:clear");
  REQUIRE(st);
  CHECK(*st == StepName::Stack("clear"));
  CHECK(StepName::Stack("set").Text() == "stack:set");
  CHECK_FALSE(StepName::Parse("stack"));
}

}  // namespace plumb::plans
