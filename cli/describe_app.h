#pragma once
/// The CLI described as data (cli/command_doc.h): the same CLI11 tree `--help` prints, walked
/// once, so the man pages and the shell completions (cli/) are generated from what the parser
/// accepts and cannot disagree with it. Hidden verbs and options (CLI11 group "") are left
/// out, as `--help` leaves them. The only file of cli/'s documentation that knows the parser
/// (cmd/ builds the tree; tests/cli/describe_app_test.cc describes a small one).
#include <string>

#include <CLI/CLI.hpp>

#include "cli/command_doc.h"

namespace plumb::cli {

CommandDoc DescribeCommand(const CLI::App& app, const std::string& path);

}  // namespace plumb::cli
