// plumb version: what a bug report needs: the version, the commit it was built from, the
// allocator and the libraries it runs with (the loaded ones, not the headers it was built on).
#include <cstdio>

#include "cli/version_text.h"
#include "cli/about_commands.h"
#include "cmd/allocator.h"
#include "cmd/build_commit.h"
#include "cmd/command.h"
#include "inventory/git_source.h"
#include "modules/transport/library_versions.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kVersionVerb = "version";

namespace {

int RunVersion(const GlobalOptions& g) {
  cli::BuildInfo b{PLUMB_VERSION, BuildCommit(), AllocatorName(), transport::LibraryVersions()};
  b.libraries.emplace_back("libgit2", inventory::Libgit2Version());
  if (g.format == "json")
    std::printf("%s\n", cli::VersionJson(b).dump(2).c_str());
  else
    std::fputs(cli::VersionText(b).c_str(), stdout);
  return ExitCodeFor(kVersionVerb, Outcome::kOk);
}

}  // namespace

void RegisterVersion(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  CLI::App* sub = cli::AddVersionCommand(app, g);
  sub->callback([&run, &g] { run = [&g] { return RunVersion(g); }; });
}

}  // namespace plumb::cmd
