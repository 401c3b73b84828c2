#pragma once
/// Shell completion scripts for bash, zsh and fish, generated from a described command tree
/// (cli/command_doc.h). Each script finds the command path typed so far ("plumb bmc
/// inventory"), then offers that command's subcommands, its options, the values of the option
/// before the cursor (a --format's set, directories for --repo, files for the rest) and, for
/// --limit and a NODE argument, the cluster repo's node names and @groups (`plumb __nodes`,
/// which the CLI keeps hidden).
#include <string>

#include "cli/command_doc.h"

namespace plumb::cli {

std::string BashCompletion(const CommandDoc& root);
std::string ZshCompletion(const CommandDoc& root);
std::string FishCompletion(const CommandDoc& root);
/// The script for `shell`: "bash", "zsh", else fish (the CLI takes only those three).
std::string CompletionScript(const std::string& shell, const CommandDoc& root);

}  // namespace plumb::cli
