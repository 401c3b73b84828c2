#pragma once
/// `plumb health`'s command line: description, flags, help and the footer on what runs,
/// filling HealthArgs. cmd/health.cc runs what it parsed. Tested in
/// tests/cli/health_command_test.cc.
#include <CLI/CLI.hpp>

#include "cli/global_options.h"
#include "plans/report/health_command.h"

namespace plumb::cli {

struct HealthArgs {
  plans::report::HealthCommandRequest req;
  bool accept_new_host_keys = false;
};

/// Adds `plumb health` to `app`, its flags filling `g` (source, --format) and `a`. The callback
/// is the caller's.
CLI::App* AddHealthCommand(CLI::App& app, GlobalOptions& g, HealthArgs& a);

}  // namespace plumb::cli
