#pragma once
/// The real ShellFactory (plans/gather.h): one transport::SshShell per node, its options from
/// the inventory's defaults.ssh, the node's overrides and the command line. Built only in cmd/,
/// the composition root; plans/ sees the interface.
#include <string>

#include "inventory/model.h"
#include "modules/ssh_settings.h"
#include "plans/gather.h"

namespace plumb::cmd {

class SshShellFactory final : public plans::ShellFactory {
 public:
  SshShellFactory(inventory::SshSettings ssh, std::string repo_root,
                  modules::SshOverrides extra = {})
      : ssh_(std::move(ssh)), repo_root_(std::move(repo_root)), extra_(std::move(extra)) {}
  std::unique_ptr<transport::Shell> Open(const inventory::Node& node) override;

 private:
  inventory::SshSettings ssh_;
  std::string repo_root_;
  modules::SshOverrides extra_;
};

}  // namespace plumb::cmd
