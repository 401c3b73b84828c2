// Bastion against a real bastion: tests/integration/ssh_jump.sh runs these inside its testbed
// with PLUMB_TEST_BASTION_* set (the head node as the bastion, two nodes behind it); without
// them they are skipped (a plain unit-test run has no sshd to talk to).
//
//   PLUMB_TEST_BASTION_HEAD    the bastion's address (user tbjump)
//   PLUMB_TEST_BASTION_NODES   two node addresses behind it, "ADDR1 ADDR2"
//   PLUMB_TEST_BASTION_CLIENT  the testbed's client dir: id_ed25519, known_hosts
//   PLUMB_TEST_BASTION_FREEZE  a command that stops (SIGSTOP) the bastion's sshd for our session
//   PLUMB_TEST_BASTION_THAW    and one that lets it go on (SIGCONT)
//   PLUMB_TEST_BASTION_CONNS   a command printing how many TCP connections the first node's
//                              port 22 has (through the bastion: the only way in)
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>
#include <libssh/libssh.h>

#include "modules/transport/ssh_jump.h"

namespace plumb::transport::ssh_jump_test {
namespace {

using Clock = std::chrono::steady_clock;

std::string JumpEnv(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

bool HaveTestBastion() { return !JumpEnv("PLUMB_TEST_BASTION_HEAD").empty(); }

std::string JumpNode(int i) {
  std::istringstream in(JumpEnv("PLUMB_TEST_BASTION_NODES"));
  std::string a, b;
  in >> a >> b;
  return i == 0 ? a : b;
}

SshOptions JumpReach(const std::string& node, const std::string& host, const std::string& user) {
  SshOptions o;
  o.node = node;
  o.host = host;
  o.user = user;
  o.known_hosts = JumpEnv("PLUMB_TEST_BASTION_CLIENT") + "/known_hosts";
  o.identity = JumpEnv("PLUMB_TEST_BASTION_CLIENT") + "/id_ed25519";
  o.connect_timeout = std::chrono::seconds(20);
  return o;
}

// The first node's established connections on port 22, as PLUMB_TEST_BASTION_CONNS counts them.
int NodeConnections() {
  FILE* p = popen(JumpEnv("PLUMB_TEST_BASTION_CONNS").c_str(), "r");
  if (p == nullptr) return -1;
  int n = -1;
  if (std::fscanf(p, "%d", &n) != 1) n = -1;
  pclose(p);
  return n;
}

double JumpSeconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// A node session of our own over a stream from the bastion, running a command that writes
// `bytes` bytes: the reader decides how fast (or whether) they are read.
struct StalledSession {
  ssh_session s = nullptr;
  ssh_channel ch = nullptr;
  std::string error;

  StalledSession(Bastion& b, const std::string& addr, size_t bytes) {
    auto fd = b.OpenStream("stalled", addr, 22, Clock::now() + std::chrono::seconds(20));
    if (!fd.ok()) {
      error = fd.error().message;
      return;
    }
    s = ssh_new();
    socket_t sock = *fd;
    int port = 22;
    bool no = false;
    const std::string kh = JumpEnv("PLUMB_TEST_BASTION_CLIENT") + "/known_hosts";
    ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no);
    ssh_options_set(s, SSH_OPTIONS_FD, &sock);
    ssh_options_set(s, SSH_OPTIONS_HOST, addr.c_str());
    ssh_options_set(s, SSH_OPTIONS_PORT, &port);
    ssh_options_set(s, SSH_OPTIONS_USER, "root");
    ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, kh.c_str());
    ssh_key key = nullptr;
    const std::string id = JumpEnv("PLUMB_TEST_BASTION_CLIENT") + "/id_ed25519";
    if (ssh_connect(s) != SSH_OK || ssh_session_is_known_server(s) != SSH_KNOWN_HOSTS_OK ||
        ssh_pki_import_privkey_file(id.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK ||
        ssh_userauth_publickey(s, nullptr, key) != SSH_AUTH_SUCCESS) {
      error = ssh_get_error(s);
      ssh_key_free(key);
      return;
    }
    ssh_key_free(key);
    ch = ssh_channel_new(s);
    const std::string cmd = fmt::format("head -c {} /dev/zero", bytes);
    if (ssh_channel_open_session(ch) != SSH_OK || ssh_channel_request_exec(ch, cmd.c_str()) != SSH_OK)
      error = ssh_get_error(s);
  }
  ~StalledSession() {
    if (ch != nullptr) ssh_channel_free(ch);
    if (s != nullptr) {
      ssh_disconnect(s);
      ssh_free(s);
    }
  }
  // Reads up to `max` bytes (blocking until some come); 0 at EOF, -1 on error.
  long Read(size_t max) {
    static char buf[16384];
    int n = ssh_channel_read_timeout(ch, buf, static_cast<uint32_t>(std::min(max, sizeof buf)), 0, 20000);
    return n;
  }
};

}  // namespace

TEST_CASE("bastion: a node stream nobody reads does not hold up the other nodes' streams") {
  if (!HaveTestBastion()) {
    MESSAGE("skipped: PLUMB_TEST_BASTION_HEAD unset (tests/integration/ssh_jump.sh sets it)");
    return;
  }
  auto bastion = std::make_shared<Bastion>(JumpReach("bastion", JumpEnv("PLUMB_TEST_BASTION_HEAD"), "tbjump"));
  constexpr size_t kBytes = 24u << 20;
  StalledSession stalled(*bastion, JumpNode(0), kBytes);
  REQUIRE_MESSAGE(stalled.error.empty(), stalled.error);

  // A slow reader first (16 KiB every 20 ms for 2 s), then none at all.
  std::atomic<size_t> got{0};
  std::thread slow([&] {
    const auto until = Clock::now() + std::chrono::seconds(2);
    while (Clock::now() < until) {
      long n = stalled.Read(16384);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });

  SshOptions o = JumpReach("other", JumpNode(1), "root");
  o.via = bastion;
  SshShell other(o);
  double worst = 0;
  int ok = 0;
  for (int i = 0; i < 12; ++i) {
    const auto t0 = Clock::now();
    auto r = other.Run("echo ok", std::chrono::seconds(30));
    const double took = JumpSeconds(Clock::now() - t0);
    worst = std::max(worst, took);
    if (r.ok() && r->out == "ok\n") {
      ++ok;
    } else {
      MESSAGE("command ", i, " failed after ", took, " s: ", r.ok() ? r->out : r.error().message);
    }
    if (i == 5) slow.join();   // from here on nobody reads the stalled stream
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  MESSAGE("the other node's 12 commands: worst ", worst, " s; the stalled stream had ", got.load(),
          " bytes read of ", kBytes);
  CHECK(ok == 12);
  CHECK(worst < 10.0);
  CHECK(bastion->open_streams() == 2);

  // Nothing was lost while the stream waited: read it to the end now.
  const auto t0 = Clock::now();
  size_t total = got.load();
  for (;;) {
    long n = stalled.Read(16384);
    if (n <= 0) break;
    total += static_cast<size_t>(n);
  }
  MESSAGE("the rest of the stalled stream read in ", JumpSeconds(Clock::now() - t0), " s");
  CHECK(total == kBytes);
}

TEST_CASE("bastion: a bastion that stops answering is found by keepalives and named") {
  if (!HaveTestBastion()) {
    MESSAGE("skipped: PLUMB_TEST_BASTION_HEAD unset (tests/integration/ssh_jump.sh sets it)");
    return;
  }
  BastionKeepalive ka;
  ka.interval = std::chrono::milliseconds(500);
  ka.count = 3;
  auto bastion = std::make_shared<Bastion>(JumpReach("bastion", JumpEnv("PLUMB_TEST_BASTION_HEAD"), "tbjump"), ka);
  SshOptions o1 = JumpReach("one", JumpNode(0), "root");
  o1.via = bastion;
  SshShell one(o1);
  auto r = one.Run("echo ok", std::chrono::seconds(30));
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  // An idle bastion that answers is kept: keepalives come and go.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  CHECK(bastion->last_drop().empty());
  CHECK(bastion->sessions_opened() == 1);

  REQUIRE(std::system(JumpEnv("PLUMB_TEST_BASTION_FREEZE").c_str()) == 0);
  SshOptions o2 = JumpReach("two", JumpNode(1), "root");
  o2.via = bastion;
  SshShell two(o2);
  auto t0 = Clock::now();
  auto r2 = two.Run("echo ok", std::chrono::seconds(30));
  const double took2 = JumpSeconds(Clock::now() - t0);
  t0 = Clock::now();
  auto r1 = one.Run("echo ok", std::chrono::seconds(30));
  const double took1 = JumpSeconds(Clock::now() - t0);
  REQUIRE(std::system(JumpEnv("PLUMB_TEST_BASTION_THAW").c_str()) == 0);
  MESSAGE("a new stream failed after ", took2, " s, a carried one after ", took1, " s; dropped: ",
          bastion->last_drop());
  REQUIRE_FALSE(r2.ok());
  CHECK(r2.error().code == "ssh.timeout");
  CHECK(r2.error().message.find("two: through bastion tbjump@") == 0);
  CHECK(r2.error().message.find("keepalive") != std::string::npos);
  CHECK(took2 < 10.0);   // not the 20 s connect timeout
  // The carried stream ended with the session (its node's session read EOF and, reading again,
  // opened a fresh one): not the 30 s command timeout.
  CHECK(took1 < 10.0);
  CHECK(bastion->last_drop().find("keepalive") != std::string::npos);

  // Answering again: the next read opens a new session.
  auto r3 = two.Run("echo ok", std::chrono::seconds(30));
  CHECK_MESSAGE(r3.ok(), (r3.ok() ? "" : r3.error().message));
  CHECK(bastion->sessions_opened() >= 2);
}

TEST_CASE("bastion: a channel given up on while opening is closed on the bastion when it opens") {
  if (!HaveTestBastion()) {
    MESSAGE("skipped: PLUMB_TEST_BASTION_HEAD unset (tests/integration/ssh_jump.sh sets it)");
    return;
  }
  auto bastion = std::make_shared<Bastion>(JumpReach("bastion", JumpEnv("PLUMB_TEST_BASTION_HEAD"), "tbjump"));
  // The session first, with a stream to the other node (so that it stays open).
  auto other = bastion->OpenStream("other", JumpNode(1), 22, Clock::now() + std::chrono::seconds(20));
  REQUIRE_MESSAGE(other.ok(), (other.ok() ? "" : other.error().message));
  // Whatever came before (another test's bastion) is gone from the node.
  const auto settle = Clock::now() + std::chrono::seconds(20);
  while (NodeConnections() != 0 && Clock::now() < settle) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  REQUIRE(NodeConnections() == 0);

  // A deadline already past: the open is sent, and given up on before the bastion answers.
  auto late = bastion->OpenStream("late", JumpNode(0), 22, Clock::now() - std::chrono::seconds(1));
  REQUIRE_FALSE(late.ok());
  CHECK(late.error().code == "ssh.timeout");
  // The bastion opens it anyway (its connection to the node is made); once it has said so the
  // channel is closed, and the bastion's connection to the node with it.
  const auto t0 = Clock::now();
  int conns = NodeConnections();
  while ((conns != 0 || bastion->channels_closing() != 0) && Clock::now() < t0 + std::chrono::seconds(20)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    conns = NodeConnections();
  }
  MESSAGE("the node's connections from the bastion: ", conns, " after ", JumpSeconds(Clock::now() - t0), " s");
  CHECK(conns == 0);
  CHECK(bastion->channels_closing() == 0);
  CHECK(bastion->open_streams() == 1);
  close(*other);
}

}  // namespace plumb::transport::ssh_jump_test
