#pragma once
/// The command lines of `plumb gather` and of `plumb facts merge`, which joins the snapshots
/// of a sharded gather: descriptions, flags, help and examples, filling GatherArgs and
/// FactsMergeArgs. cmd/gather.cc and cmd/facts.cc run what they parsed. Tested in
/// tests/cli/gather_command_test.cc.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/global_options.h"
#include "plans/observe/facts_merge.h"
#include "plans/report/gather_run.h"

namespace plumb::cli {

struct GatherArgs {
  plans::report::GatherRequest req;
  bool accept_new_host_keys = false;
  bool print_probe_script = false;   ///< print what one node runs, contact nothing
};

/// Adds `plumb gather` to `app`, its flags filling `g` (source, --format) and `a`. The callback
/// is the caller's.
CLI::App* AddGatherCommand(CLI::App& app, GlobalOptions& g, GatherArgs& a);

struct FactsMergeArgs {
  std::vector<std::string> parts;   ///< the snapshot files, each checked to exist
  std::string output;               ///< -o FILE ("" = stdout)
  plans::MergeOptions merge;
};

/// `plumb facts` and its one verb, `merge`, as added to the command line.
struct FactsCommand {
  CLI::App* facts = nullptr;
  CLI::App* merge = nullptr;   ///< its callback is the caller's
};

/// Adds `plumb facts merge` to `app`, filling `a`.
FactsCommand AddFactsCommand(CLI::App& app, FactsMergeArgs& a);

}  // namespace plumb::cli
