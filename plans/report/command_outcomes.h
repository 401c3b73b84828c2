#pragma once
/// What `plumb plan`, `drift` and `health` print and exit with, from their reports: the renderer
/// of each --format, the verdict line for a machine's log, the exit code of schemas/exit_codes.
/// cmd/ hands the result to plans::EmitOutcome (plans/core/command_output.h) with stdout.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "plans/core/command_output.h"
#include "inventory/load.h"
#include "plans/plan/plan.h"
#include "plans/report/drift.h"
#include "plans/report/drift_render.h"
#include "plans/report/health_report.h"

namespace plumb::plans::report {

/// How a text report is shown to its reader (cmd/: coloured on a terminal); null: as is.
using TextStyle = std::function<std::string(std::string text)>;

/// drift --format text|json|junit|sarif|prom|html; its verdict counts the nodes; exit code
/// DriftExitCode.
CommandOutcome DriftCommandOutcome(const DriftReport& report, const std::string& format,
                                   const RenderOptions& ro, const TextStyle& style);

/// health --format text|json|junit|prom; exit code: a failed check > a node that could not be
/// checked > healthy.
CommandOutcome HealthCommandOutcome(const HealthReport& report, const std::string& format,
                                    long long now_unix, const TextStyle& style);

/// diff --format text|json|markdown of the desired state between two loads of the repo (JSON
/// names both full commits); exit code: changes with --detailed-exitcode when any node's
/// desired state changes, else in sync.
CommandOutcome DiffCommandOutcome(const inventory::LoadedCluster& before,
                                  const inventory::LoadedCluster& after, const std::string& format,
                                  bool detailed_exitcode, const TextStyle& style);

/// What `plumb plan` was asked to show and keep.
struct PlanOutput {
  std::string format = "text";          ///< text | json | markdown (to `out`)
  std::string file;                     ///< --out: the plan file ("" none)
  bool detailed_exitcode = false;
  std::vector<std::string> notes;       ///< shown with the plan (the commit's signature)
  TextStyle style;                      ///< the text plan's
};

/// Shows `plan` on `out` in the format asked, writes the plan file (never one with errors),
/// says on `err` what the reader must know (notes, uncommitted edits, errors, unreadable
/// nodes), and returns plan's exit code. Seals the plan when a file or JSON is asked for.
int EmitPlan(Plan& plan, const PlanOutput& o, std::ostream& out, std::ostream& err);

}  // namespace plumb::plans::report
