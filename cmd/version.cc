#include <cstdio>

#include "cmd/allocator.h"
#include "cmd/command.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kVersionVerb = "version";

void RegisterVersion(CLI::App& app, GlobalOptions&, std::function<int()>& run) {
  auto* sub = app.add_subcommand("version", "Print plumb's version");
  sub->callback([&run] {
    run = [] {
      std::printf("plumb %s (%s)\n", PLUMB_VERSION, AllocatorName().c_str());
      return (ExitCodeFor(kVersionVerb, Outcome::kOk));
    };
  });
}

}  // namespace plumb::cmd
