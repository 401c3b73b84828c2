#pragma once
/// The options every verb shares, filled by whichever verb the command line names: where the
/// cluster repo is and at which commit, the output format, --verbose and --color. One value for
/// the whole process (main.cc makes it); each verb's command line adds the ones it takes.
#include <string>

#include <CLI/CLI.hpp>

#include "cli/shared_options.h"

namespace plumb::cli {

struct GlobalOptions {
  std::string repo = ".";        ///< cluster repo path
  std::string ref = "HEAD";      ///< git ref to read it at
  bool working_tree = false;     ///< read uncommitted files instead of the ref
  std::string format = "text";   ///< text | json (subcommands may add more)
  bool verbose = false;
  std::string color = "auto";    ///< --color: auto | always | never (cmd/color.h)
};

/// Adds the shared --repo/--ref/--working-tree options to a subcommand.
inline void AddSourceOptions(CLI::App& sub, GlobalOptions& g) {
  AddSourceOptions(sub, g.repo, g.ref, g.working_tree);
}

}  // namespace plumb::cli
