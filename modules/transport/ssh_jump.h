#pragma once
/// SSH through a bastion (OpenSSH's ProxyJump), with one bastion session for every node behind
/// it: each node's connection is a direct-tcpip channel of that session, joined to a local
/// socketpair whose other end the node's own SshShell speaks SSH over. The node's host key is
/// checked end to end as usual, and the bastion's own host key like a node's, before any
/// credential is offered to it.
///
/// All libssh calls on the bastion session run on one thread of the Bastion's own (libssh
/// sessions are not thread-safe): OpenStream hands it a request and waits for the answer.
/// That thread never blocks on a node: it copies each stream's bytes itself, non-blocking, through
/// a buffer of kStreamBuffer bytes each way. A full buffer stops the reads that would fill it
/// (the channel's SSH window then stops the node's bytes at the bastion; a full channel window
/// stops reads from the node's session), so a node session that stops reading holds up its own
/// stream only.
///
/// A bastion that goes silent (network gone, host frozen) is found by keepalives: after
/// `interval` without a packet from it, the thread sends OpenSSH's keepalive@openssh.com (a
/// global request with want-reply: any answer will do); after `count` of them unanswered the
/// session is dropped, every stream it carried ends (its node's session reads EOF), and every
/// stream still opening fails with "ssh.timeout" naming the bastion. The socket also carries
/// TCP_USER_TIMEOUT of interval x count, so bytes the bastion never acknowledges end it too.
///
/// Not supported: more than one hop. A node is reached through one bastion, which is itself
/// reached directly (OpenSSH's `ProxyJump a,b` has no equivalent: the inventory's `jump` pattern
/// refuses a comma, and a Bastion ignores SshOptions::via). Only TCP forwarding to the node's
/// sshd is used (no agent forwarding, no ProxyCommand).
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "modules/transport/ssh_shell.h"

namespace plumb::transport {

/// How often a silent bastion is asked whether it is there, and how many unanswered questions
/// mean it is gone (OpenSSH's ServerAliveInterval and ServerAliveCountMax).
struct BastionKeepalive {
  std::chrono::milliseconds interval{std::chrono::seconds(15)};
  int count = 3;
};

class Bastion final : public StreamOpener {
 public:
  /// Bytes buffered per stream and direction between the channel and the node's socket.
  static constexpr size_t kStreamBuffer = 64 * 1024;

  /// `options` reach the bastion: host, port, user, known_hosts, identity, connect_timeout,
  /// accept_new_hostkeys, kex and cancel, as for a node (`via` is ignored: one hop only).
  /// Nothing is opened until a stream is asked for.
  explicit Bastion(SshOptions options, BastionKeepalive keepalive = {});
  ~Bastion() override;
  Bastion(const Bastion&) = delete;
  Bastion& operator=(const Bastion&) = delete;

  /// A connected stream to host:port as the bastion sees it. Opens (or re-opens, after it
  /// broke) the bastion session first. Errors name the bastion and the node: "ssh.timeout",
  /// "ssh.refused", "ssh.io", or the bastion's own "ssh.hostkey", "ssh.auth"...
  Result<int> OpenStream(const std::string& node, const std::string& host, int port,
                         std::chrono::steady_clock::time_point deadline) override;

  /// "user@host:port": the bastion as OpenSSH's -J names it (for hints).
  std::string JumpSpec() const override;

  /// Node connections carried now (for tests and the watch's numbers).
  size_t open_streams() const;
  /// Times the bastion session was opened (1 while it never broke).
  int sessions_opened() const;
  /// Channels given up on while opening whose answer is still awaited, to close them then.
  size_t channels_closing() const;
  /// Why the bastion session was last dropped ("" while it never was).
  std::string last_drop() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace plumb::transport
