// A rollout's progress as drawn (plans/report/progress): CI lines, JSON lines, the live table.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "plans/report/progress.h"

using namespace plumb;
using K = plans::RolloutEvent::Kind;

namespace {

plans::RolloutEvent Ev(K kind, std::string node = {}, std::string step = {},
                       std::string status = {}, std::string message = {}) {
  plans::RolloutEvent e;
  e.kind = kind;
  e.run = "r1";
  e.node = std::move(node);
  e.step = std::move(step);
  e.status = std::move(status);
  e.message = std::move(message);
  return e;
}

// What an observer of `kind` wrote for `events`, once it is gone.
std::string Drawn(plans::report::ProgressKind kind, const std::vector<plans::RolloutEvent>& events,
                  plans::report::ProgressColors colors = {}) {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  {
    auto o = plans::report::MakeProgressObserver(kind, f, colors);
    for (const auto& e : events) o->OnEvent(e);
  }
  std::rewind(f);
  std::string out;
  for (int c; (c = std::fgetc(f)) != EOF;) out += static_cast<char>(c);
  std::fclose(f);
  return out;
}

}  // namespace

TEST_CASE("progress lines: one per outcome, none for a step's start or a batch's end") {
  plans::RolloutEvent batch = Ev(K::kBatchStart, "", "", "", "gpu[001-002]");
  batch.batch = 0;
  batch.batches = 3;
  batch.canary = true;
  plans::RolloutEvent ok = Ev(K::kStep, "gpu001", "drain", "ok");
  ok.elapsed_ms = 65400;
  plans::RolloutEvent wait = Ev(K::kWait, "", "budget", "", "the scheduler does not answer");
  wait.elapsed_ms = 4200;
  const std::string out = Drawn(
      plans::report::ProgressKind::kLines,
      {Ev(K::kRunStart, "", "", "", "2 nodes in 3 batches"), batch,
       Ev(K::kStep, "gpu001", "drain", "start"), ok, Ev(K::kNote, "gpu001", "", "", "starting"),
       wait, Ev(K::kNodeEnd, "gpu002", "verify", "failed", "sysctl differs"),
       Ev(K::kBatchEnd), Ev(K::kRunEnd, "", "", "failed", "1 done, 1 failed")},
      {.line = [](std::string_view l) { return "[" + std::string(l) + "]"; }});
  CHECK(out ==
        "[run r1: 2 nodes in 3 batches]\n"
        "[batch 1/3 (canary): gpu[001-002]]\n"
        "[  gpu001     drain                        ok in 1m05s]\n"
        "[  -          budget                       waiting 4.2s: the scheduler does not answer]\n"
        "[  gpu002     => failed (verify: sysctl differs)]\n"
        "[run r1 failed: 1 done, 1 failed]\n");
}

TEST_CASE("progress JSON: every event, one object a line") {
  const std::string out = Drawn(plans::report::ProgressKind::kJson,
                                {Ev(K::kStep, "gpu001", "drain", "start"), Ev(K::kBatchEnd)});
  const auto nl = out.find('\n');
  REQUIRE(nl != std::string::npos);
  CHECK(nlohmann::json::parse(out.substr(0, nl)) == Ev(K::kStep, "gpu001", "drain", "start").ToJson());
  CHECK(out.substr(nl + 1) == Ev(K::kBatchEnd).ToJson().dump() + "\n");
}

TEST_CASE("progress table: a row per node of the batch, its status coloured, the run's end below") {
  plans::RolloutEvent batch = Ev(K::kBatchStart);
  batch.batch = 1;
  batch.batches = 2;
  const std::string out = Drawn(
      plans::report::ProgressKind::kTable,
      {Ev(K::kRunStart, "", "", "", "1 node"), batch, Ev(K::kStep, "gpu001", "reboot", "start"),
       Ev(K::kNodeEnd, "gpu001", "verify", "done", "converged"),
       Ev(K::kRunEnd, "", "", "done", "1 done")},
      {.status = [](std::string_view s) { return "<" + std::string(s) + ">"; }});
  CHECK(out.find("run r1: 1 node\nbatch 2/2  elapsed ") != std::string::npos);
  CHECK(out.find("  gpu001       reboot                       <done>         converged\n") !=
        std::string::npos);
  CHECK(out.find("\033[") != std::string::npos);   // redrawn in place
  const std::string end = "\nrun r1 <done>: 1 done\n";
  REQUIRE(out.size() > end.size());
  CHECK(out.substr(out.size() - end.size()) == end);
}

TEST_CASE("progress durations: seconds with a tenth under a minute, then minutes") {
  CHECK(plans::report::ProgressDuration(0) == "0.0s");
  CHECK(plans::report::ProgressDuration(4250) == "4.2s");
  CHECK(plans::report::ProgressDuration(60000) == "1m00s");
  CHECK(plans::report::ProgressDuration(3725000) == "62m05s");
}
