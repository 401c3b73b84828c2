#pragma once
/// Observer: how a rollout reports progress (terraform's Hook, ninja's Status). The engine emits
/// events; cmd/ renders them (a live TTY view, plain lines, or JSON lines). Implementations are
/// called from several node threads at once and must synchronize themselves.
#include <string>

#include <nlohmann/json.hpp>

namespace plumb::plans {

struct RolloutEvent {
  enum class Kind {
    kRunStart,    ///< message: "N nodes in M batches"
    kBatchStart,  ///< batch, nodes (in message)
    kStep,        ///< node, step, status "start" | "ok" | "skipped" | "failed" | "interrupted"
    kNodeEnd,     ///< node, status "done" | "failed" | "stale" | "interrupted" | "not-started"
    kBatchEnd,
    kRunEnd,      ///< status: the run's outcome
    kNote,        ///< anything else worth a line (budget, window)
    kWait,        ///< heartbeat of a step that waits: node, step, message (what it waits for),
                  ///< elapsed_ms; `status` "scheduler" when the scheduler cannot be read
  };
  Kind kind = Kind::kNote;
  std::string time;        ///< RFC 3339
  std::string run;
  int batch = -1;          ///< 0-based, -1 when not about a batch
  int batches = 0;
  bool canary = false;
  std::string node;
  std::string step;
  std::string status;
  std::string message;
  long long elapsed_ms = 0;   ///< for step/node ends: how long it took

  nlohmann::json ToJson() const;
};

const char* EventKindName(RolloutEvent::Kind k);

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void OnEvent(const RolloutEvent& e) = 0;
};

/// Discards everything.
class NullObserver final : public Observer {
 public:
  void OnEvent(const RolloutEvent&) override {}
};

}  // namespace plumb::plans
