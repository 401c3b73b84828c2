#pragma once
/// The command lines of the verbs that read only the cluster repo: `plumb validate`, `plumb
/// show NODE`, `plumb diff REV1 REV2`: descriptions, flags, help and examples. cmd/validate.cc,
/// show.cc and diff.cc run what they parsed. Tested in tests/cli/repo_commands_test.cc.
#include <string>

#include <CLI/CLI.hpp>

#include "cli/global_options.h"

namespace plumb::cli {

/// Adds `plumb validate` to `app`, filling `g` (source, --format). The callback is the caller's.
CLI::App* AddValidateCommand(CLI::App& app, GlobalOptions& g);

struct ShowArgs {
  std::string node;   ///< the node, as in inventory.yaml
};

/// Adds `plumb show` to `app`, filling `g` (source, --format) and `a`. The callback is the
/// caller's.
CLI::App* AddShowCommand(CLI::App& app, GlobalOptions& g, ShowArgs& a);

struct DiffArgs {
  std::string from, to;             ///< REV1, REV2
  bool detailed_exitcode = false;   ///< exit 2 when anything changes
};

/// Adds `plumb diff` to `app`, filling `g` (--repo, --format) and `a`. The callback is the
/// caller's.
CLI::App* AddDiffCommand(CLI::App& app, GlobalOptions& g, DiffArgs& a);

}  // namespace plumb::cli
