#pragma once
/// A command tree described as data: each command's path, text and options, as its --help
/// prints them. The shell completions (cli/completion.h) and the man pages (cli/man_page.h) are
/// generated from it, so they say what the parser accepts. The CLI builds it from its parser
/// (cli/describe_app.h); nothing else here knows the parser, so a test can describe a small tree by hand.
#include <string>
#include <vector>

namespace plumb::cli {

struct OptionDoc {
  std::vector<std::string> names;     ///< "--limit", "-v"; for a positional its name ("plan")
  std::string value;                  ///< "TEXT", "INT"; empty for a flag
  std::vector<std::string> choices;   ///< the only values the option takes, when it says so
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

/// The footer cut at its blank lines: {"Examples:\n  ...", "Exit codes:\n  ...", "text"}.
std::vector<std::string> FooterParagraphs(const std::string& footer);

/// The text up to its first newline: a description's summary.
std::string FirstLineOf(const std::string& text);

/// "plumb bmc inventory" -> "plumb-bmc" (the man page a nested command is documented in).
std::string ManPageName(const std::string& path);

/// The last word of a command's path: its name as typed ("plumb bmc inventory" -> "inventory").
std::string CommandName(const CommandDoc& c);

}  // namespace plumb::cli
