#pragma once
/// The CLI described as data: the same CLI11 tree `--help` prints, walked once, so the man pages
/// and the shell completions are generated from what the parser accepts and cannot disagree
/// with it. Hidden verbs and options (CLI11 group "") are left out, as `--help` leaves them.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace plumb::cmd {

struct OptionDoc {
  std::vector<std::string> names;     ///< "--limit", "-v"; for a positional its name ("plan")
  std::string value;                  ///< "TEXT", "INT"; empty for a flag
  std::vector<std::string> choices;   ///< from a CLI::IsMember check: the only values taken
  std::string description;
  std::string default_value;          ///< as --help shows it; empty when none
  bool positional = false;
  bool required = false;
  bool value_optional = false;        ///< takes a value or none (--resume [RUN])
};

struct CommandDoc {
  std::string path;          ///< "plumb", "plumb bmc", "plumb bmc inventory"
  std::string description;
  std::string footer;        ///< what --help prints after the options (text, Examples:, Exit codes:)
  std::vector<OptionDoc> options;
  std::vector<CommandDoc> subcommands;
};

CommandDoc DescribeCommand(const CLI::App& app, const std::string& path);

/// The footer cut at its blank lines: {"Examples:\n  ...", "Exit codes:\n  ...", "text"}.
std::vector<std::string> FooterParagraphs(const std::string& footer);

/// The text up to its first newline: a description's summary.
std::string FirstLineOf(const std::string& text);

/// "plumb bmc inventory" -> "plumb-bmc" (the man page a nested command is documented in).
std::string ManPageName(const std::string& path);

std::string ManPage(const CommandDoc& cmd, const CommandDoc& root, const std::string& version);
std::string RootManPage(const CommandDoc& root, const std::string& version);
/// plumb-repo(5): the cluster repo's files, each described by its embedded JSON Schema.
std::string RepoManPage(const std::string& version);

std::string BashCompletion(const CommandDoc& root);
std::string ZshCompletion(const CommandDoc& root);
std::string FishCompletion(const CommandDoc& root);

}  // namespace plumb::cmd
