#include "modules/ssh_settings.h"

#include <cstdlib>

namespace plumb::modules {
namespace {

std::string ResolvePath(const std::string& p, const std::string& root) {
  if (p.empty() || p[0] == '/') return p;
  if (p.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    return std::string(home != nullptr ? home : "") + p.substr(1);
  }
  if (root.empty() || root == ".") return p;
  return root.back() == '/' ? root + p : root + "/" + p;
}

}  // namespace

transport::SshOptions SshOptionsFor(const inventory::SshSettings& ssh, const inventory::Node& node,
                                    const std::string& repo_root, const SshOverrides& extra) {
  transport::SshOptions o;
  o.node = node.name;
  o.host = node.address;
  o.port = node.ssh_port.value_or(ssh.port);
  o.user = ssh.user;
  o.known_hosts = ResolvePath(ssh.known_hosts, repo_root);
  o.identity = ResolvePath(ssh.identity, repo_root);
  o.identity_passphrase = extra.identity_passphrase;
  o.connect_timeout = std::chrono::seconds(ssh.connect_timeout_s);
  o.accept_new_hostkeys = extra.accept_new_hostkeys;
  if (!extra.kex.empty()) o.kex = extra.kex;
  o.cancel = extra.cancel;
  return o;
}

}  // namespace plumb::modules
