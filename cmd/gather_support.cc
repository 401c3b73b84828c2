#include "cmd/gather_support.h"

#include "cmd/color.h"
#include "modules/probe_script.h"

namespace plumb::cmd {

std::string RepoRoot(const GlobalOptions& g) { return g.repo; }

std::string ProbeScriptFor(const std::vector<const modules::Module*>& modules) {
  auto script = modules::BuildProbeScript(modules, modules::NewProbeNonce());
  return script.ok() ? *script : std::string();
}

bool ProgressOnStderr() { return TerminalCanDraw(2); }

}  // namespace plumb::cmd
