#pragma once
/// The real ShellFactory (plans/observe/gather.h): one transport::SshShell per node, its options from
/// the inventory's defaults.ssh, the node's overrides and the command line. Nodes behind a
/// bastion (`ssh: { jump }`) share one transport::Bastion per bastion: one session to it carries
/// all their connections. Built only in cmd/, the composition root; plans/ sees the interface.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "inventory/model.h"
#include "modules/ssh_settings.h"
#include "modules/transport/ssh_jump.h"
#include "plans/observe/gather.h"

namespace plumb::cmd {

class SshShellFactory final : public plans::ShellFactory {
 public:
  SshShellFactory(inventory::SshSettings ssh, std::string repo_root,
                  modules::SshOverrides extra = {})
      : ssh_(std::move(ssh)), repo_root_(std::move(repo_root)), extra_(std::move(extra)) {}
  /// Safe to call from several threads at once.
  std::unique_ptr<transport::Shell> Open(const inventory::Node& node) override;

 private:
  /// The bastion for `jump` (Node::ssh_jump), made on first use and shared from then on.
  std::shared_ptr<transport::Bastion> BastionFor(const std::string& jump,
                                                 const transport::SshOptions& node_options);

  inventory::SshSettings ssh_;
  std::string repo_root_;
  modules::SshOverrides extra_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<transport::Bastion>> bastions_;
};

/// The one way a command makes its node shells: the inventory's SSH settings, relative paths
/// resolved against `repo_root`, --accept-new-host-keys, the identity's passphrase from
/// $PLUMB_SSH_PASSPHRASE (a secret, never printed), and `cancel` (watch: Ctrl-C ends probes in
/// flight at once; may be null).
modules::SshOverrides SshOverridesFromEnv(bool accept_new_host_keys,
                                          const transport::CancelSignal* cancel = nullptr);
std::unique_ptr<SshShellFactory> MakeNodeShells(const inventory::SshSettings& ssh,
                                                const std::string& repo_root,
                                                bool accept_new_host_keys,
                                                const transport::CancelSignal* cancel = nullptr);

}  // namespace plumb::cmd
