#pragma once
/// The real ShellFactory: transport::SshShell per node, its options taken from the inventory's
/// defaults.ssh plus the node's own overrides.
#include <string>

#include "inventory/model.h"
#include "modules/transport/ssh_shell.h"
#include "plans/gather.h"

namespace plumb::plans {

/// What the command line adds to the inventory's SSH settings.
struct SshOverrides {
  bool accept_new_hostkeys = false;   ///< --accept-new-host-keys
  std::string identity_passphrase;    ///< from $PLUMB_SSH_PASSPHRASE; a secret, never printed
  std::string kex;                    ///< empty = transport::kDefaultKex
  /// Set to true to make connects and commands in progress give up (SshOptions::cancel).
  const transport::CancelSignal* cancel = nullptr;
};

/// Maps defaults.ssh + node to SshOptions. Relative known_hosts/identity paths are resolved
/// against `repo_root` (the cluster repo's directory on disk); "~/" against $HOME.
transport::SshOptions SshOptionsFor(const inventory::SshSettings& ssh, const inventory::Node& node,
                                    const std::string& repo_root, const SshOverrides& extra = {});

class SshShellFactory : public ShellFactory {
 public:
  SshShellFactory(inventory::SshSettings ssh, std::string repo_root, SshOverrides extra = {})
      : ssh_(std::move(ssh)), repo_root_(std::move(repo_root)), extra_(std::move(extra)) {}
  std::unique_ptr<transport::Shell> Open(const inventory::Node& node) override;

 private:
  inventory::SshSettings ssh_;
  std::string repo_root_;
  SshOverrides extra_;
};

}  // namespace plumb::plans
