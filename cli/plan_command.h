#pragma once
/// `plumb plan`'s command line: description, flags (the read run's, --trust-policy-from,
/// --no-scheduler, --out, --detailed-exitcode, --format), the long footer, filling PlanArgs.
/// cmd/plan.cc runs what it parsed. Tested in tests/cli/read_run_commands_test.cc.
#include <string>

#include <CLI/CLI.hpp>

#include "cli/global_options.h"
#include "cli/read_run_options.h"

namespace plumb::cli {

struct PlanArgs {
  ReadRunArgs read;
  std::string out;                  ///< --out: the plan file
  bool detailed_exitcode = false;   ///< exit 2 when changes are pending
};

/// Adds `plumb plan` to `app`, its flags filling `g` (source, --format) and `a`. The callback
/// is the caller's.
CLI::App* AddPlanCommand(CLI::App& app, GlobalOptions& g, PlanArgs& a);

}  // namespace plumb::cli
