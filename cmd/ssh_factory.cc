#include "cmd/ssh_factory.h"

namespace plumb::cmd {

std::unique_ptr<transport::Shell> SshShellFactory::Open(const inventory::Node& node) {
  return std::make_unique<transport::SshShell>(
      modules::SshOptionsFor(ssh_, node, repo_root_, extra_));
}

}  // namespace plumb::cmd
