#pragma once
/// Man pages (roff, man(7) macros) from a described command tree (cli/command_doc.h) and, for
/// plumb-repo(5), from the JSON Schemas compiled into the binary: what `--help` and `plumb
/// validate` say is what the pages say.
#include <string>
#include <utility>
#include <vector>

#include "cli/command_doc.h"

namespace plumb::cli {

/// plumb-VERB(1): one verb of `root` and every command below it.
std::string ManPage(const CommandDoc& cmd, const CommandDoc& root, const std::string& version);
/// plumb(1): the verbs, the global options and the exit codes.
std::string RootManPage(const CommandDoc& root, const std::string& version);
/// plumb-repo(5): the cluster repo's files, each described by its embedded JSON Schema.
std::string RepoManPage(const std::string& version);

/// Every page of `root` by its path under the man directory: man1/plumb.1, man5/plumb-repo.5,
/// then man1/plumb-VERB.1 for each verb, in the tree's order (`plumb __man DIR` writes them).
std::vector<std::pair<std::string, std::string>> ManPages(const CommandDoc& root,
                                                          const std::string& version);

}  // namespace plumb::cli
