#pragma once
/// `plumb bmc`'s command line and its verbs' (inventory, plan, apply, reset): descriptions,
/// flags, help and examples, filling plans::BmcFlags, and BmcApplyArgs for `bmc apply`.
/// cmd/bmc.cc runs what they parsed. Tested in tests/cli/bmc_command_test.cc.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/apply_command.h"
#include "cli/global_options.h"
#include "plans/session/apply_flags.h"
#include "plans/session/bmc_session.h"

namespace plumb::cli {

/// `bmc apply`'s flags: a subset of plumb apply's (plans::BmcApplyFlagsOf makes apply's flags
/// of them), and two it refuses when given.
struct BmcApplyArgs {
  plans::ApplyFlags a;
  std::vector<std::string> limits;
  std::string refused_targets, refused_desired;
};

/// `plumb bmc` and its verbs as added to the command line; each verb's callback is the
/// caller's.
struct BmcCommand {
  CLI::App* bmc = nullptr;
  CLI::App* inventory = nullptr;
  CLI::App* plan = nullptr;
  CLI::App* apply = nullptr;
  CLI::App* reset = nullptr;
  /// The `bmc apply` flags it shares with plumb apply: once parsed, the given ones are in
  /// `f.a.given` for apply's conflict rules, so --reboot-grace without --resume is refused
  /// there too.
  RuledOptions apply_ruled;
};

/// Adds `plumb bmc` to `app`. inventory, plan and reset fill `g` and `o` (one BmcFlags for the
/// three: only one runs); apply fills `g` and `f`.
BmcCommand AddBmcCommand(CLI::App& app, GlobalOptions& g, plans::BmcFlags& o, BmcApplyArgs& f);

}  // namespace plumb::cli
