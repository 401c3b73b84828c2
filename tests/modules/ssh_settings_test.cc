// SSH option mapping (inventory -> SshOptions) and the transport's own error classification on
// loopback sockets it opens itself (no sshd needed).
#include <doctest/doctest.h>

#include <arpa/inet.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "modules/ssh_settings.h"

using namespace plumb;
using namespace std::chrono_literals;

TEST_CASE("ssh options come from defaults.ssh, the node, and the command line") {
  inventory::SshSettings ssh;
  ssh.user = "admin";
  ssh.port = 2222;
  ssh.known_hosts = "known_hosts";
  ssh.identity = "keys/id_ed25519";
  ssh.connect_timeout_s = 7;
  inventory::Node node;
  node.name = "gpu001";
  node.address = "gpu001.pod-a.example";

  auto o = modules::SshOptionsFor(ssh, node, "/srv/pod-a");
  CHECK(o.node == "gpu001");
  CHECK(o.host == "gpu001.pod-a.example");
  CHECK(o.port == 2222);
  CHECK(o.user == "admin");
  CHECK(o.known_hosts == "/srv/pod-a/known_hosts");
  CHECK(o.identity == "/srv/pod-a/keys/id_ed25519");
  CHECK(o.connect_timeout == 7s);
  CHECK_FALSE(o.accept_new_hostkeys);  // never on by default
  CHECK(o.kex.rfind("curve25519-sha256,", 0) == 0);

  node.ssh_port = 22;
  ssh.known_hosts = "/etc/plumb/known_hosts";
  ssh.identity = "";
  modules::SshOverrides extra;
  extra.accept_new_hostkeys = true;
  extra.kex = "diffie-hellman-group14-sha256";
  o = modules::SshOptionsFor(ssh, node, "/srv/pod-a/", extra);
  CHECK(o.port == 22);
  CHECK(o.known_hosts == "/etc/plumb/known_hosts");
  CHECK(o.identity.empty());  // agent
  CHECK(o.accept_new_hostkeys);
  CHECK(o.kex == "diffie-hellman-group14-sha256");
  CHECK(o.cancel == nullptr);
  transport::CancelSignal stop;
  extra.cancel = &stop;
  CHECK(modules::SshOptionsFor(ssh, node, "/srv/pod-a/", extra).cancel == &stop);
}

namespace {
// A listening loopback socket on a free port; close() it to get a port nobody listens on.
struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(listen(fd, 4) == 0);
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~Listener() { if (fd >= 0) close(fd); }
};

transport::SshOptions Loopback(int port) {
  transport::SshOptions o;
  o.node = "n1";
  o.host = "127.0.0.1";
  o.port = port;
  o.known_hosts = "/dev/null";
  o.connect_timeout = 400ms;
  return o;
}
}  // namespace

TEST_CASE("nothing listening is 'ssh.refused'") {
  int port;
  {
    Listener l;
    port = l.port;
  }
  transport::SshShell sh(Loopback(port));
  auto r = sh.Run("true", 1s);
  REQUIRE(!r.ok());
  CHECK(r.error().code == "ssh.refused");
  CHECK(r.error().message.find("n1") != std::string::npos);
  CHECK_FALSE(sh.connected());
}

TEST_CASE("a peer that accepts TCP but never speaks SSH is 'ssh.timeout' within the deadline") {
  Listener l;  // the kernel completes the handshake from the backlog; nobody ever answers
  transport::SshShell sh(Loopback(l.port));
  auto t0 = std::chrono::steady_clock::now();
  auto r = sh.Run("true", 5s);
  auto took = std::chrono::steady_clock::now() - t0;
  REQUIRE(!r.ok());
  CHECK(r.error().code == "ssh.timeout");
  CHECK(took < 3s);
}

TEST_CASE("a cancelled shell gives up at once with 'ssh.cancelled', connecting nowhere") {
  Listener l;  // accepts TCP, never speaks SSH: without the cancel this waits out the deadline
  transport::CancelSignal stop;
  stop.Set();
  transport::SshOptions o = Loopback(l.port);
  o.connect_timeout = std::chrono::hours(1);
  o.cancel = &stop;
  transport::SshShell sh(o);
  auto r = sh.Run("true", std::chrono::hours(1));
  REQUIRE(!r.ok());
  CHECK(r.error().code == "ssh.cancelled");
  CHECK(r.error().message.find("n1") != std::string::npos);
  CHECK_FALSE(sh.connected());
}
