#include "cmd/ssh_factory.h"

#include <cstdlib>

namespace plumb::cmd {

std::shared_ptr<transport::Bastion> SshShellFactory::BastionFor(
    const std::string& jump, const transport::SshOptions& node_options) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& b = bastions_[jump];
  if (b == nullptr) {
    // The schema admits only jumps ParseJump reads.
    const inventory::JumpSpec spec = inventory::ParseJump(jump).value_or(inventory::JumpSpec{});
    transport::SshOptions o = node_options;   // known_hosts, identity, timeouts, kex, cancel
    o.node = "bastion " + spec.host;
    o.host = spec.host;
    o.port = spec.port;
    if (!spec.user.empty()) o.user = spec.user;
    o.via = nullptr;
    b = std::make_shared<transport::Bastion>(std::move(o));
  }
  return b;
}

std::unique_ptr<transport::Shell> SshShellFactory::Open(const inventory::Node& node) {
  transport::SshOptions o = modules::SshOptionsFor(ssh_, node, repo_root_, extra_);
  if (!node.ssh_jump.empty()) o.via = BastionFor(node.ssh_jump, o);
  return std::make_unique<transport::SshShell>(std::move(o));
}

modules::SshOverrides SshOverridesFromEnv(bool accept_new_host_keys,
                                          const transport::CancelSignal* cancel) {
  modules::SshOverrides extra;
  extra.accept_new_hostkeys = accept_new_host_keys;
  if (const char* p = std::getenv("PLUMB_SSH_PASSPHRASE")) extra.identity_passphrase = p;
  extra.cancel = cancel;
  return extra;
}

std::unique_ptr<SshShellFactory> MakeNodeShells(const inventory::SshSettings& ssh,
                                                const std::string& repo_root,
                                                bool accept_new_host_keys,
                                                const transport::CancelSignal* cancel) {
  return std::make_unique<SshShellFactory>(ssh, repo_root,
                                           SshOverridesFromEnv(accept_new_host_keys, cancel));
}

}  // namespace plumb::cmd
