#pragma once
/// `plumb drift`'s command line: description, flags (the read run's, --format, --out) and
/// footer, filling DriftArgs. cmd/drift.cc runs what it parsed. Tested in
/// tests/cli/read_run_commands_test.cc.
#include <string>

#include <CLI/CLI.hpp>

#include "cli/global_options.h"
#include "cli/read_run_options.h"

namespace plumb::cli {

struct DriftArgs {
  ReadRunArgs read;
  std::string out;   ///< --out: the report's file ("" = stdout)
  /// --tag-stacks: after the read, the schedulers' stack tags made true (plans/rollout/stack_reassert.h)
  bool tag_stacks = false;
};

/// Adds `plumb drift` to `app`, its flags filling `g` (source, --format) and `a`. The callback
/// is the caller's.
CLI::App* AddDriftCommand(CLI::App& app, GlobalOptions& g, DriftArgs& a);

}  // namespace plumb::cli
