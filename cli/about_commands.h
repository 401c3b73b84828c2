#pragma once
/// The command lines of the verbs about plumb itself: `version`, `schemas`, `modules`,
/// `exit-codes`, `completion` (and the hidden `__nodes` its scripts call), and the hidden
/// `__man` the build runs: descriptions, flags, help and examples. Each returns the command;
/// its callback is the caller's (cmd/version.cc, schemas.cc, modules.cc, exit_codes.cc,
/// completion.cc, man.cc). Tested in tests/cli/about_commands_test.cc.
#include <string>

#include <CLI/CLI.hpp>

#include "cli/global_options.h"

namespace plumb::cli {

/// `plumb version`, filling `g` (--format).
CLI::App* AddVersionCommand(CLI::App& app, GlobalOptions& g);

struct SchemasArgs {
  std::string out;     ///< --out DIR: write every file there
  std::string print;   ///< --print NAME: print that one
};
/// `plumb schemas`, filling `a`.
CLI::App* AddSchemasCommand(CLI::App& app, SchemasArgs& a);

/// `plumb modules`, filling `g` (--format).
CLI::App* AddModulesCommand(CLI::App& app, GlobalOptions& g);

/// `plumb exit-codes`, filling `g` (--format).
CLI::App* AddExitCodesCommand(CLI::App& app, GlobalOptions& g);

/// `plumb completion SHELL` (bash, zsh or fish), filling `shell`.
CLI::App* AddCompletionCommand(CLI::App& app, std::string& shell);

/// The hidden `plumb __nodes` the completion scripts call for --limit, filling `g` (source).
CLI::App* AddNodesCommand(CLI::App& app, GlobalOptions& g);

/// The hidden `plumb __man DIR`, filling `dir`.
CLI::App* AddManCommand(CLI::App& app, std::string& dir);

}  // namespace plumb::cli
