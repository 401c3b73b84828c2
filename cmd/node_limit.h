#pragma once
/// A --limit (bmc: --limit/--node) given with no node term in it: "", " ", ",", "!". Left out,
/// --limit means every node; given empty it is a script's `--limit "$NODES"` whose variable was
/// empty, and must not roll the whole fleet. Checked once, for every verb, right after the
/// command line is parsed: before anything is read or changed.
#include <vector>

#include <CLI/CLI.hpp>

namespace plumb::cmd {

/// The command line with `--limit=` and `--node=` (an empty value after '=', a script's
/// `--limit="$NODES"`) split into the flag and an empty argument, so they read as `--limit ''`
/// and get the refusal below (CLI11 would read `--limit=` as a flag missing its value). The
/// pointers point into argv and one static "".
std::vector<char*> SplitEmptyLimitValues(int argc, char** argv);

/// Says which --limit names no node (the verb, the argument's position, why) with a hint, and
/// returns the exit code; -1 when every --limit given names some node.
int RefuseLimitNamingNoNode(const CLI::App& app, int argc, char** argv);

}  // namespace plumb::cmd
