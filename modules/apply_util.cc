#include "modules/apply_util.h"

#include <fmt/format.h>

namespace plumb::modules {

std::string TailLines(std::string_view text, int lines) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  size_t pos = text.size();
  for (int i = 0; i < lines && pos > 0; ++i) {
    size_t nl = text.rfind('\n', pos - 1);
    pos = nl == std::string_view::npos ? 0 : nl;
    if (nl == std::string_view::npos) break;
  }
  std::string_view tail = text.substr(pos);
  if (!tail.empty() && tail.front() == '\n') tail.remove_prefix(1);
  return std::string(tail);
}

Result<transport::CommandOutput> RunChecked(NodeContext& ctx, std::string_view module,
                                            const std::string& command) {
  if (!ctx.shell)
    return Diagnostic::Error("apply.no-shell",
                             fmt::format("{}: no SSH shell to the node", module));
  auto out = ctx.shell->Run(command, ctx.command_timeout);
  if (!out.ok()) return out;
  if (out->exit_status != 0) {
    std::string tail = TailLines(out->err.empty() ? out->out : out->err);
    return Diagnostic::Error(fmt::format("apply.{}", module),
                             fmt::format("'{}' exited {}: {}", command, out->exit_status, tail));
  }
  return out;
}

}  // namespace plumb::modules
