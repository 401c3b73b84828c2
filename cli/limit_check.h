#pragma once
/// A --limit (bmc: --limit/--node) given with no node term in it: "", " ", ",", "!". Left out,
/// --limit means every node; given empty it is a script's `--limit "$NODES"` whose variable was
/// empty, and must not roll the whole fleet. Checked once, for every verb, right after the
/// command line is parsed: before anything is read or changed. Tested in
/// tests/cli/limit_check_test.cc.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "schemas/result.h"

namespace plumb::cli {

/// The command line with `--limit=` and `--node=` (an empty value after '=', a script's
/// `--limit="$NODES"`) split into the flag and an empty argument, so they read as `--limit ''`
/// and get the refusal below (CLI11 would read `--limit=` as a flag missing its value). The
/// pointers point into argv and one static "".
std::vector<char*> SplitEmptyLimitValues(int argc, char** argv);

/// The error for a --limit value that names no node (plans::LimitNamesNoNode), or nullopt.
using LimitJudge = std::function<std::optional<Diagnostic>(std::string_view)>;

/// The refusal of the first --limit of the parsed `app` that `names_no_node` refuses: the lines
/// "plumb VERB: error: ... (argument N)" and "  hint: ..." for stderr; nullopt when every
/// --limit given names some node.
std::optional<std::string> LimitNamingNoNode(const CLI::App& app, int argc, char** argv,
                                             const LimitJudge& names_no_node);

}  // namespace plumb::cli
