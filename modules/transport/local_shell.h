#pragma once
/// LocalShell: runs commands on this machine with /bin/sh -c (a Shell like SSH's, for the
/// scheduler's CLI on the host plumb runs on, and for tests). Each command runs in its own
/// process group, killed as a whole when the timeout expires.
#include <map>
#include <string>

#include "modules/transport/shell.h"

namespace plumb::transport {

class LocalShell final : public Shell {
 public:
  /// `env` entries are added to the command's environment (e.g. SLURM_CONF).
  explicit LocalShell(std::map<std::string, std::string> env = {}) : env_(std::move(env)) {}
  /// A non-zero exit is a CommandOutput; "local.spawn" when it cannot start, "local.timeout".
  Result<CommandOutput> Run(std::string_view command, std::chrono::milliseconds timeout) override;

 private:
  std::map<std::string, std::string> env_;
};

}  // namespace plumb::transport
