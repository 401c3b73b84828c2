#pragma once
/// The subcommand table (ninja's ChooseTool): one line per cmd/<name>.cc.
#include "cmd/command.h"

namespace plumb::cmd {

void RegisterVersion(CLI::App&, GlobalOptions&, std::function<int()>&);

inline constexpr Register kSubcommands[] = {
    RegisterVersion,
};

}  // namespace plumb::cmd
