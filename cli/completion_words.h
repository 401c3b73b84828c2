#pragma once
/// What the three completion scripts (cli/completion.h) share: what the word after an option
/// completes to, and a command's words as the scripts' case arms list them.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_doc.h"

namespace plumb::cli {

/// What the word after an option (or a positional) completes to. kFree: a value nothing here
/// can list (a run id, a git ref, a name): the completion offers nothing rather than files.
enum class ValueKind { kNone, kChoices, kNodes, kDirectory, kFile, kFree };

ValueKind KindOf(const OptionDoc& o);

/// `f` on `c` and then on every command below it, depth first.
void WalkCommands(const CommandDoc& c, const std::function<void(const CommandDoc&)>& f);

/// Words of the scripts are single-quoted as for sh (bash, zsh and fish read 'it'\''s' alike).
std::string SingleQuoted(std::string_view s);

/// "a b c": the words joined by blanks.
std::string Words(const std::vector<std::string>& v);

/// Every name of every option of `c` ("-v --verbose --limit"), positionals left out.
std::vector<std::string> OptionNames(const CommandDoc& c);

/// The names of `c`'s subcommands as typed ("inventory", not "plumb bmc inventory").
std::vector<std::string> SubcommandNames(const CommandDoc& c);

/// What a command's positional arguments complete to, for the scripts' `pos`: "nodes",
/// "files", 'words:a b c' (its set of values) or '' (the first positional decides).
std::string PositionalWords(const CommandDoc& c);

/// How many positionals `c` takes (`npos`), so none is offered once they are all typed.
int PositionalCount(const CommandDoc& c);

/// Options that take a value, " --repo --ref " (blank-delimited for a pattern match): the
/// word after one is its value, not a positional argument.
std::string ValueOptions(const CommandDoc& c);

/// What `plumb __nodes` prints for the completion of --limit: each node name, then each group
/// as @group, one a line; a name with anything outside [A-Za-z0-9._-] is left out (bash's
/// `compgen -W` expands its words, $(...) included, whatever a future schema lets through).
std::string NodeCompletionWords(const std::vector<std::string>& nodes,
                                const std::vector<std::string>& groups);

/// Every command path below `root`, quoted and joined by `sep`: 'plumb plan'|'plumb bmc'|...
std::string QuotedPaths(const CommandDoc& root, std::string_view sep);

/// A script built of case arms, as the bash and zsh ones are (they differ in words only): its
/// helpers as they are, then its completion function, a format given (in this order) the
/// command paths, every command's arm and every option's value arm. An option's value arm
/// is one format per kind of value, given the arm's pattern 'cmdpath|--option' (and for
/// kChoices the values: quoted as one word, or as they are).
struct CaseScript {
  std::string_view helpers, function;
  std::string (*command_arm)(const CommandDoc& c);
  std::string_view choices, nodes, directory, file, free;
  bool quote_choices = false;
};
std::string CaseScriptFor(const CommandDoc& root, const CaseScript& s);

}  // namespace plumb::cli
