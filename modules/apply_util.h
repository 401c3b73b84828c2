#pragma once
/// Running apply commands: every failure becomes a located Diagnostic carrying the command and
/// the tail of its output.
#include <string>
#include <string_view>

#include "modules/module.h"

namespace plumb::modules {

/// The last `lines` lines of `text` (for error messages).
std::string TailLines(std::string_view text, int lines = 8);

/// Runs `command` through ctx.shell with ctx.command_timeout. A transport failure is returned
/// as is; a non-zero exit becomes Diagnostic "apply.<module>": "'<command>' exited N: <stderr
/// tail>". Fails "apply.no-shell" when the node has no shell.
Result<transport::CommandOutput> RunChecked(NodeContext& ctx, std::string_view module,
                                            const std::string& command);

}  // namespace plumb::modules
