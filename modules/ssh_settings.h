#pragma once
/// From the inventory's SSH settings (defaults.ssh, the node's own port) and what the command
/// line adds, to the options of one SSH session. Pure: it opens nothing.
#include <string>

#include "inventory/model.h"
#include "modules/transport/ssh_shell.h"

namespace plumb::modules {

/// What the command line adds to the inventory's SSH settings.
struct SshOverrides {
  bool accept_new_hostkeys = false;   ///< --accept-new-host-keys
  std::string identity_passphrase;    ///< from $PLUMB_SSH_PASSPHRASE; a secret, never printed
  std::string kex;                    ///< empty = transport::kDefaultKex
  /// Set to true to make connects and commands in progress give up (SshOptions::cancel).
  const transport::CancelSignal* cancel = nullptr;
};

/// Maps defaults.ssh + node to SshOptions. Relative known_hosts/identity paths are resolved
/// against `repo_root` (the cluster repo's directory on disk, never the current directory:
/// `apply PLAN.json` run elsewhere must check the same host keys); "~/" against $HOME.
transport::SshOptions SshOptionsFor(const inventory::SshSettings& ssh, const inventory::Node& node,
                         const std::string& repo_root, const SshOverrides& extra = {});

}  // namespace plumb::modules
