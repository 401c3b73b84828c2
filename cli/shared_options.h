#pragma once
/// Options several verbs declare alike, declared once: the same names, help and checks
/// wherever they appear (and in the man pages and completions made from them). A verb whose
/// option means something of its own (apply's --ref, --store) declares it itself.
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace plumb::cli {

/// --repo, --ref, --working-tree: where and at which commit the cluster repo is read.
void AddSourceOptions(CLI::App& sub, std::string& repo, std::string& ref, bool& working_tree);

/// --store/--journal of the verbs that only read the store (runs, history, audit).
void AddStoreOption(CLI::App& sub, std::string& store);

/// --accept-new-host-keys, for the verbs that open SSH sessions to the nodes.
void AddHostKeysFlag(CLI::App& sub, bool& accept);

/// --limit as node patterns; `what` starts its help ("Nodes", "Nodes to check").
void AddNodeLimit(CLI::App& sub, std::string& limit, std::string_view what = "Nodes");

/// --format: one of `choices` (anything else is refused while parsing), the default shown.
CLI::Option* AddFormat(CLI::App& sub, std::string& format, const std::string& help,
                       const std::vector<std::string>& choices);

}  // namespace plumb::cli
