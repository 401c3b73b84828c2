#pragma once
/// `plumb acceptance`'s command line and `acceptance verify`'s: descriptions, flags, help and
/// examples, filling AcceptanceArgs. cmd/acceptance.cc runs what they parsed. Tested in
/// tests/cli/acceptance_command_test.cc.
#include <string>

#include <CLI/CLI.hpp>

#include "cli/global_options.h"
#include "cli/read_run_options.h"

namespace plumb::cli {

struct AcceptanceArgs {
  ReadRunArgs read;
  std::string out;             ///< --out DIR: the report, and the nodes' kept results
  int dcgm_level = 3;
  int timeout_s = 7200;
  int health_fanout = 16;
  std::string operator_name;   ///< --operator ("" = $SUDO_USER or $USER)
  bool fresh = false;
  bool allow_busy = false;
  std::string verify_path;     ///< `acceptance verify REPORT`
};

/// `plumb acceptance` and its `verify` as added to the command line; both callbacks are the
/// caller's (acceptance's must leave `run` to verify's when verify was given).
struct AcceptanceCommand {
  CLI::App* acceptance = nullptr;
  CLI::App* verify = nullptr;
};

/// Adds `plumb acceptance` (and `acceptance verify`) to `app`, filling `g` (source) and `a`.
AcceptanceCommand AddAcceptanceCommand(CLI::App& app, GlobalOptions& g, AcceptanceArgs& a);

}  // namespace plumb::cli
