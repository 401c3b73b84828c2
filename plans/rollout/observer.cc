#include "plans/rollout/observer.h"

namespace plumb::plans {

const char* EventKindName(RolloutEvent::Kind k) {
  switch (k) {
    case RolloutEvent::Kind::kRunStart: return "run-start";
    case RolloutEvent::Kind::kBatchStart: return "batch-start";
    case RolloutEvent::Kind::kStep: return "step";
    case RolloutEvent::Kind::kNodeEnd: return "node-end";
    case RolloutEvent::Kind::kBatchEnd: return "batch-end";
    case RolloutEvent::Kind::kRunEnd: return "run-end";
    case RolloutEvent::Kind::kNote: return "note";
    case RolloutEvent::Kind::kWait: return "wait";
  }
  return "note";
}

nlohmann::json RolloutEvent::ToJson() const {
  nlohmann::json j = {{"event", EventKindName(kind)}, {"time", time}, {"run", run}};
  if (batch >= 0) {
    j["batch"] = batch;
    j["batches"] = batches;
    if (canary) j["canary"] = true;
  }
  if (!node.empty()) j["node"] = node;
  if (!step.empty()) j["step"] = step;
  if (!status.empty()) j["status"] = status;
  if (!message.empty()) j["message"] = message;
  if (elapsed_ms > 0) j["elapsed_ms"] = elapsed_ms;
  return j;
}

}  // namespace plumb::plans
