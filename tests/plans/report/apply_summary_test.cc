// The text apply ends with: the failed nodes, why the run stopped, and the one command that
// continues from here - never --resume past a failed canary.
#include <doctest/doctest.h>

#include "plans/report/apply_summary.h"

using namespace plumb;

namespace {
bool SummaryHas(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}
plans::NodeOutcome OutcomeOf(std::string n, std::string status, bool left_drained = false) {
  plans::NodeOutcome o;
  o.node = std::move(n);
  o.status = *plans::ParseNodeState(status);
  o.step = "verify";
  o.error = "kernel: want k2, have k1";
  o.left_drained = left_drained;
  return o;
}
}  // namespace

TEST_CASE("apply summary: a run that is done says nothing more") {
  plans::RolloutResult r;
  r.outcome = plans::RunState::kDone;
  r.nodes = {OutcomeOf("n1", "done"), OutcomeOf("n2", "done")};
  CHECK(plans::report::ApplySummaryText(r, "r1", "/j.db").empty());
}

TEST_CASE("apply summary: a failed canary is retried, never resumed past") {
  plans::RolloutResult r;
  r.outcome = plans::RunState::kHalted;
  r.halt_reason = "canary n1 failed";
  r.nodes = {OutcomeOf("n1", "failed", true), OutcomeOf("n2", "not-started")};
  const std::string t = plans::report::ApplySummaryText(r, "r1", "/j.db");
  CHECK(SummaryHas(t, "FAILED n1 at verify: kernel: want k2, have k1 (left drained)"));
  CHECK(SummaryHas(t, "halted: canary n1 failed"));
  CHECK(SummaryHas(t, "plumb apply --retry-failed r1"));
  CHECK(SummaryHas(t, "will not roll the fleet past a failed canary"));
  CHECK_FALSE(SummaryHas(t, "continue with: plumb apply --resume"));
}

TEST_CASE("apply summary: interrupted, incomplete and halted-for-budget runs say how to continue") {
  for (const char* outcome : {"interrupted", "incomplete", "halted"}) {
    plans::RolloutResult r;
    r.outcome = *plans::ParseRunState(outcome);
    if (std::string(outcome) == "halted") r.halt_reason = "max_unavailable 2 reached";
    r.nodes = {OutcomeOf("n1", "done"), OutcomeOf("n2", std::string(outcome) == "incomplete" ? "busy" : "interrupted")};
    const std::string t = plans::report::ApplySummaryText(r, "r7", "/j.db");
    CAPTURE(outcome);
    CHECK(SummaryHas(t, "continue with: plumb apply --resume r7"));
    CHECK(SummaryHas(t, "retries the busy and stale nodes") == (std::string(outcome) == "incomplete"));
    CHECK(SummaryHas(t, "BUSY n2") == (std::string(outcome) == "incomplete"));
  }
}

TEST_CASE("apply summary: a paused run names the window or the scheduler; a broken journal names its path") {
  plans::RolloutResult r;
  r.outcome = plans::RunState::kPaused;
  r.next_window = "2027-01-02T22:00:00Z";
  CHECK(SummaryHas(plans::report::ApplySummaryText(r, "r2", "/j.db"), "next opens 2027-01-02T22:00:00Z: plumb apply --resume r2"));
  r.next_window.clear();
  CHECK(SummaryHas(plans::report::ApplySummaryText(r, "r2", "/j.db"), "continues once the scheduler answers"));
  plans::RolloutResult f;
  f.outcome = plans::RunState::kFailed;
  f.journal_failed = true;
  CHECK(SummaryHas(plans::report::ApplySummaryText(f, "r3", "/var/lib/plumb/j.db"),
            "the journal at /var/lib/plumb/j.db could not be written"));
}

TEST_CASE("apply summary: a store that stopped answering is said so, not taken for a full disk") {
  plans::RolloutResult f;
  f.outcome = plans::RunState::kFailed;
  f.journal_failed = true;
  f.diags.Add(Diagnostic::Error("journal.unreachable", "journal (postgresql://db/plumb): the store has not answered"));
  const std::string text = plans::report::ApplySummaryText(f, "r4", "postgresql://db/plumb");
  CHECK(SummaryHas(text, "the store postgresql://db/plumb stopped answering"));
  CHECK(SummaryHas(text, "plumb apply --resume r4 re-checks each node"));
  CHECK(text.find("free space") == std::string::npos);
  plans::RolloutResult w;
  w.outcome = plans::RunState::kFailed;
  w.journal_failed = true;
  w.diags.Add(Diagnostic::Error("journal.postgresql", "journal (postgresql://db/plumb): COMMIT: disk quota"));
  const std::string refused = plans::report::ApplySummaryText(w, "r5", "postgresql://db/plumb");
  CHECK(SummaryHas(refused, "refused or lost a write"));
  CHECK(refused.find("free space") == std::string::npos);
}
