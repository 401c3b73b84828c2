#include <cstdio>

#include "cmd/allocator.h"
#include "cmd/command.h"

namespace plumb::cmd {

void RegisterVersion(CLI::App& app, GlobalOptions&, std::function<int()>& run) {
  auto* sub = app.add_subcommand("version", "Print plumb's version");
  sub->callback([&run] {
    run = [] {
      std::printf("plumb %s (%s)\n", PLUMB_VERSION, AllocatorName().c_str());
      return static_cast<int>(kExitOk);
    };
  });
}

}  // namespace plumb::cmd
