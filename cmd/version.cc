#include <cstdio>

#include "cmd/command.h"

namespace plumb::cmd {

void RegisterVersion(CLI::App& app, GlobalOptions&, std::function<int()>& run) {
  auto* sub = app.add_subcommand("version", "Print plumb's version");
  sub->callback([&run] {
    run = [] {
      std::printf("plumb %s\n", PLUMB_VERSION);
      return static_cast<int>(kExitOk);
    };
  });
}

}  // namespace plumb::cmd
