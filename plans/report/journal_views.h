#pragma once
/// What `plumb runs` and `plumb history` print from the journal: the runs (newest first), one
/// run's nodes, the steps of a node or of all. Pure functions of the records the store gave
/// (plans/store/run_liveness.h says which runs are still carried), each as text or JSON.
#include <map>
#include <string>
#include <vector>

#include "plans/store/journal.h"
#include "plans/store/run_liveness.h"

namespace plumb::plans::report {

/// A run as `plumb runs` lists it: the record and what its liveness shows.
struct RunRow {
  RunRecord run;
  std::string state;
};
std::string RunsText(const std::vector<RunRow>& rows);
std::string RunsJson(const std::vector<RunRow>& rows);

/// One run: its record, its liveness, its nodes (each with what is known of where a stopped
/// run left it, StoppedNodeNote), and the plan's nodes it has no row for.
struct RunDetail {
  RunRecord run;
  RunLiveness live;
  std::vector<NodeRecord> nodes;
  std::vector<std::string> known;        ///< per node of `nodes`, "" when nothing to add
  std::vector<std::string> unrecorded;
};
std::string RunDetailText(const RunDetail& d);
std::string RunDetailJson(const RunDetail& d);

/// Steps as `plumb history` shows them, each run's who once above its steps.
struct HistoryView {
  std::vector<StepRecord> steps;
  std::map<std::string, RunRecord> runs;   ///< the runs of `steps` the journal still has
};
std::string HistoryText(const HistoryView& h);
std::string HistoryJson(const HistoryView& h);

/// "alice (CI github: bob), approved by carol; commit ssh carol (SHA256:..)".
std::string WhoLine(const RunWho& w);

}  // namespace plumb::plans::report
