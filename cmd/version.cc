// plumb version: what a bug report needs: the version, the commit it was built from, the
// allocator and the libraries it runs with (the loaded ones, not the headers it was built on).
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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
  auto libs = transport::LibraryVersions();
  libs.emplace_back("libgit2", inventory::Libgit2Version());
  if (g.format == "json") {
    nlohmann::json j = {{"version", PLUMB_VERSION}, {"commit", BuildCommit()},
                        {"allocator", AllocatorName()}, {"libraries", nlohmann::json::object()}};
    for (const auto& [name, v] : libs) j["libraries"][name] = v;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("plumb %s\ncommit     %s\nallocator  %s\n", PLUMB_VERSION, BuildCommit(),
                AllocatorName().c_str());
    for (const auto& [name, v] : libs) std::printf("%-10s %s\n", name.c_str(), v.c_str());
  }
  return ExitCodeFor(kVersionVerb, Outcome::kOk);
}

}  // namespace

void RegisterVersion(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* sub = app.add_subcommand(
      "version", "Print plumb's version, the commit it was built from, its allocator and libraries");
  sub->add_option("--format", g.format, "text | json")->check(CLI::IsMember({"text", "json"}));
  sub->footer(
      "Examples:\n"
      "  plumb version                   for a bug report: version, commit, libraries\n"
      "  plumb version --format json     the same for a script\n"
      "  plumb --version                 the version alone");
  sub->callback([&run, &g] { run = [&g] { return RunVersion(g); }; });
}

}  // namespace plumb::cmd
