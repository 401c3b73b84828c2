#pragma once
/// SSH through a bastion (OpenSSH's ProxyJump), with one bastion session for every node behind
/// it: each node's connection is a direct-tcpip channel of that session, joined to a local
/// socketpair whose other end the node's own SshShell speaks SSH over. The node's host key is
/// checked end to end as usual, and the bastion's own host key like a node's, before any
/// credential is offered to it.
///
/// All libssh calls on the bastion session run on one thread of the Bastion's own (libssh
/// sessions are not thread-safe): OpenStream hands it a request and waits for the answer.
#include <chrono>
#include <memory>
#include <string>

#include "modules/transport/ssh_shell.h"

namespace plumb::transport {

class Bastion final : public StreamOpener {
 public:
  /// `options` reach the bastion: host, port, user, known_hosts, identity, connect_timeout,
  /// accept_new_hostkeys, kex and cancel, as for a node. Nothing is opened until a stream is
  /// asked for.
  explicit Bastion(SshOptions options);
  ~Bastion() override;
  Bastion(const Bastion&) = delete;
  Bastion& operator=(const Bastion&) = delete;

  /// A connected stream to host:port as the bastion sees it. Opens (or re-opens, after it
  /// broke) the bastion session first. Errors name the bastion and the node: "ssh.timeout",
  /// "ssh.refused", "ssh.io", or the bastion's own "ssh.hostkey", "ssh.auth"...
  Result<int> OpenStream(const std::string& node, const std::string& host, int port,
                         std::chrono::steady_clock::time_point deadline) override;

  /// Node connections carried now (for tests and the watch's numbers).
  size_t open_streams() const;
  /// Times the bastion session was opened (1 while it never broke).
  int sessions_opened() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace plumb::transport
