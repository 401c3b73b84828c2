// NodeRun: the stack the scheduler shows on the node (modules/drain/stack_tag.h). A job that
// asks for a stack (`--constraint=stack_<name>`, a nodeSelector) must land only on a node that
// runs it: so the tag goes before the node's first change and comes back, the commit's, once
// the node is verified and marked. Tags are the scheduler's metadata, not the node: setting
// them changes nothing on the node and takes nothing out of service.
#include "plans/rollout/rollout_internal.h"

#include <fmt/format.h>

// Events are built with designated initializers naming only the fields that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace plumb::plans::rollout_detail {

std::optional<modules::StackTag> NodeRun::WantedTag() {
  // A run of some modules only (plumb bmc apply) does not make the node the commit's stack,
  // as it writes no marker; a scheduler without tags (none) has nothing to show.
  if (!e_.plan().only_modules.empty() || !Sched().ShowsStacks()) return std::nullopt;
  auto it = e_.opts().stacks.find(np_.node);
  if (it == e_.opts().stacks.end() || it->second.empty()) return std::nullopt;
  return modules::TagOf(it->second, e_.Commit());
}

StepResult NodeRun::SetTag(const StepName& step, const modules::StackTag& tag) {
  modules::SchedulerNode sn;
  switch (ReadNode(step, &sn)) {
    case SchedRead::kGaveUp: return StepResult::Interrupted();
    case SchedRead::kUnknownNode:
      return StepResult::Failed(fmt::format("{} does not know node {}", Sched().Name(), np_.node));
    case SchedRead::kOk: break;
  }
  nlohmann::json detail = {{"scheduler", std::string(Sched().Name())},
                           {"was", modules::TagText(sn.stack_tag)},
                           {"now", modules::TagText(tag)}};
  if (sn.stack_tag == tag) {
    detail["why"] = tag.empty() ? "shows no stack" : "shows it already";
    return StepResult::SkippedWith(detail);
  }
  Status s = SchedulerCall(step, [&] { return Sched().SetStack(sn, tag); });
  if (!s && s.error().code == modules::kSchedulerUnavailable) return StepResult::Interrupted();
  if (!s) return StepResult::Failed(s.error().message);
  return StepResult::Ok(detail);
}

bool NodeRun::HideStack() {
  if (!WantedTag()) return true;
  const StepName step = StepName::Stack("clear");
  if (!ContinueTo(step)) return false;
  // A tag that cannot be cleared stops the node here, before any change: it would come back
  // to service still showing the stack it no longer runs.
  StepResult r = Step(step, {}, [&] { return SetTag(step, {}); });
  return Check(step, r);
}

bool NodeRun::ShowStack() {
  const auto tag = WantedTag();
  if (!tag) return true;
  const StepName step = StepName::Stack("set");
  if (!ContinueTo(step)) return false;
  // A name no scheduler can carry: the node shows none (never the tag it had before its
  // change, which may name another stack).
  const std::string problem = modules::TagProblem(*tag);
  if (!problem.empty())
    e_.Emit({.kind = RolloutEvent::Kind::kNote, .node = np_.node,
             .message = fmt::format("shows no stack: {}", problem)});
  const modules::StackTag show = problem.empty() ? *tag : modules::StackTag{};
  StepResult r = Step(step, {}, [&] {
    StepResult set = SetTag(step, show);
    if (set.outcome != StepState::kFailed) return set;
    // The node is changed, verified and marked: a tag the scheduler refused does not undo
    // that, and the node returns without a stack (cleared before its change), where no job
    // that asks for one lands. Said loudly; `plumb drift --tag-stacks` sets it later.
    e_.Emit({.kind = RolloutEvent::Kind::kNote, .node = np_.node,
             .message = fmt::format("could not show stack {} ({}); it returns to service without it",
                                    modules::TagText(show), set.error)});
    return StepResult::Skipped("the scheduler refused the tag: " + set.error);
  });
  return Check(step, r);
}

}  // namespace plumb::plans::rollout_detail
