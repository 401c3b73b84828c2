// Host key problems name who presented the key (the node, or the bastion), and the hint for a
// node's unknown key reaches it the way plumb does: through its bastion (ssh -J), since
// ssh-keyscan from here cannot reach a node only the bastion reaches.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "modules/transport/ssh_shell.h"

namespace plumb::transport::ssh_hostkey_test {
namespace {

class FakeJump final : public StreamOpener {
 public:
  Result<int> OpenStream(const std::string&, const std::string&, int,
                         std::chrono::steady_clock::time_point) override {
    return Diagnostic::Error("ssh.io", "not used");
  }
  std::string JumpSpec() const override { return "tbjump@10.9.0.1:2222"; }
};

SshOptions Node(bool behind_bastion) {
  SshOptions o;
  o.node = "n3";
  o.host = "10.9.0.13";
  o.port = 22;
  o.user = "root";
  if (behind_bastion) o.via = std::make_shared<FakeJump>();
  return o;
}

SshOptions BastionSession() {
  SshOptions o;
  o.node = "bastion 10.9.0.1";
  o.host = "10.9.0.1";
  o.port = 2222;
  o.user = "tbjump";
  o.bastion = true;
  return o;
}

constexpr const char* kKey = "ssh-ed25519 SHA256:abc";
constexpr const char* kKh = "/repo/known_hosts";

}  // namespace

TEST_CASE("host key: a changed bastion key says the bastion presented it, not the node") {
  Diagnostic d = HostKeyChanged(BastionSession(), kKey, kKh);
  CHECK(d.code == "ssh.hostkey-changed");
  CHECK(d.message.find("the bastion presented ssh-ed25519 SHA256:abc") != std::string::npos);
  CHECK(d.message.find("the node presented") == std::string::npos);
  CHECK(d.hint.find("if the bastion was reinstalled") != std::string::npos);
  CHECK(d.hint.find("ssh-keygen -R 10.9.0.1 -f /repo/known_hosts") != std::string::npos);
  // A node's own changed key behind the bastion: the node presented it, through the bastion.
  Diagnostic n = HostKeyChanged(Node(true), kKey, kKh);
  CHECK(n.message.find("the node presented") != std::string::npos);
  CHECK(n.message.find("reached through the bastion tbjump@10.9.0.1:2222") != std::string::npos);
}

TEST_CASE("host key: an unknown key behind a bastion gets the -J form, not ssh-keyscan") {
  Diagnostic d = HostKeyUnknown(Node(true), kKey, kKh);
  CHECK(d.code == "ssh.hostkey");
  CHECK(d.message.find("the node presented ssh-ed25519 SHA256:abc") != std::string::npos);
  CHECK(d.hint.find("ssh-keyscan") == std::string::npos);
  CHECK(d.hint.find("reached only through the bastion tbjump@10.9.0.1:2222") != std::string::npos);
  CHECK(d.hint.find("ssh -J tbjump@10.9.0.1:2222 -p 22 -o UserKnownHostsFile=/repo/known_hosts root@10.9.0.13") !=
        std::string::npos);
  // Reached directly (a node, or the bastion itself): ssh-keyscan reaches it.
  Diagnostic direct = HostKeyUnknown(Node(false), kKey, kKh);
  CHECK(direct.hint.find("ssh-keyscan -t ed25519 -p 22 10.9.0.13") != std::string::npos);
  CHECK(direct.hint.find("ssh -J") == std::string::npos);
  Diagnostic bastion = HostKeyUnknown(BastionSession(), kKey, kKh);
  CHECK(bastion.message.find("the bastion presented") != std::string::npos);
  CHECK(bastion.hint.find("ssh-keyscan -t ed25519 -p 2222 10.9.0.1") != std::string::npos);
}

}  // namespace plumb::transport::ssh_hostkey_test
