#pragma once
/// What the command line says before and after CLI11 parses it, beyond the flags themselves:
/// a mistyped verb, options every command shares (--color), where the cluster repo comes from,
/// and the retired count --limit of `runs` and `history`. main.cc calls these; tested in
/// tests/cli/command_line_test.cc.
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace plumb::cli {

/// `plumb pln`: CLI11 would say "A subcommand is required"; the user meant a verb. The first
/// word of argv that is not a flag must name one of `app`'s commands. When it does not: the
/// lines for stderr (the word, the nearest verb, where the list is); nullopt when it does (or
/// there is no such word).
std::optional<std::string> UnknownVerb(const CLI::App& app, int argc, char** argv);

/// Adds --color (auto | always | never, into `color`) to every listed command of `app`, nested
/// ones too; hidden commands (no group) print no report and get none.
void AddColorOption(CLI::App& app, std::string& color);

/// Whether the parsed command line says where the repo is, so main must not look for it
/// upwards from the current directory: --repo was given to a parsed (sub)command, or the verb
/// is `apply`, which reads an absent --repo as "the repo the plan file names".
bool RepoIsGiven(const CLI::App& app);

/// `runs` and `history` counted with --limit, which takes node patterns everywhere else; their
/// count is --last now. Adds the old flag, hidden, into `value`...
void AddRetiredCountLimit(CLI::App& sub, std::string& value);
/// ...and, when it was given (`value` not empty), the error and hint lines for stderr: use
/// --last N for a count; for history, one node's name is its argument. nullopt when not given.
std::optional<std::string> RetiredCountLimitRefusal(std::string_view verb, const std::string& value);

}  // namespace plumb::cli
