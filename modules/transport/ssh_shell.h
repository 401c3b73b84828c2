#pragma once
/// SshShell: transport::Shell over one libssh session to one node. The session is opened by the
/// first Run() and kept for the next ones (one TCP connection, one key exchange per node); a
/// broken or timed-out session is dropped and the next Run() reconnects (after a reboot, say).
///
/// Host keys are always verified against `known_hosts`: an unknown key fails with "ssh.hostkey"
/// unless `accept_new_hostkeys` (an explicit opt-in) records it; a changed key always fails with
/// "ssh.hostkey-changed". Error codes: "ssh.refused", "ssh.timeout", "ssh.auth", "ssh.hostkey",
/// "ssh.hostkey-changed", "ssh.io", "ssh.cancelled" (SshOptions::cancel). Messages never contain secrets (the passphrase).
///
/// One SshShell is used by one thread at a time; different SshShells may run in parallel.
/// libssh's headers stay in ssh_shell.cc and ssh_jump.cc.
#include <chrono>
#include <memory>
#include <string>

#include "modules/transport/cancel_signal.h"
#include "modules/transport/shell.h"

struct ssh_session_struct;   // libssh's session, opaque here

namespace plumb::transport {

/// Key exchange order plumb asks for: curve25519 first (cheap on both ends; OpenSSH 9's default
/// sntrup761x25519 costs ~7x the client CPU), then widely supported fallbacks.
inline constexpr const char* kDefaultKex =
    "curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,"
    "diffie-hellman-group16-sha512,diffie-hellman-group14-sha256";

/// How a session reaches a node's sshd when not by a TCP connection of its own: a bastion
/// (ssh_jump.h). Returns a connected stream socket the session takes over (and closes).
class StreamOpener {
 public:
  virtual ~StreamOpener() = default;
  virtual Result<int> OpenStream(const std::string& node, const std::string& host, int port,
                                 std::chrono::steady_clock::time_point deadline) = 0;
  /// How OpenSSH's -J would name it ("jump@10.0.0.1:22"), for hints; "" when it is no bastion.
  virtual std::string JumpSpec() const { return {}; }
};

struct SshOptions {
  std::string node;            ///< name used in messages ("gpu001")
  std::string host;            ///< address to connect to (name or IP literal)
  int port = 22;
  std::string user = "root";
  std::string known_hosts;     ///< absolute path; empty = libssh's default (~/.ssh/known_hosts)
  std::string identity;        ///< private key file; empty = ssh-agent ($SSH_AUTH_SOCK)
  /// Passphrase of `identity` if it is encrypted. A secret: never printed, never in errors.
  std::string identity_passphrase;
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
  bool accept_new_hostkeys = false;   ///< record unknown host keys in known_hosts (never changed ones)
  std::string kex = kDefaultKex;      ///< SSH_OPTIONS_KEY_EXCHANGE list
  /// When set, a TCP connect or a command's output wait in progress gives up at once with
  /// "ssh.cancelled" (a long-lived caller shutting down: plumb watch on SIGTERM): each wait is
  /// one poll() on the socket and the signal's fd together. The handshake and libssh's own
  /// short waits (channel open, exec, exit status) are not interruptible and still end by the
  /// connect or command timeout.
  const CancelSignal* cancel = nullptr;
  /// Set: the node is reached through this (a bastion, shared by its nodes' sessions) instead
  /// of a TCP connection to host:port; host and port are then as the bastion sees them.
  std::shared_ptr<StreamOpener> via;
  /// This session is to a bastion (ssh_jump.h), not a node: messages say "the bastion".
  bool bastion = false;
};

/// The host key problems, as Connect reports them (exposed for tests): the key `presented`
/// ("ssh-ed25519 SHA256:...") is not the one `known_hosts` records for the host (changed), or
/// it has none (unknown). They name who presented it (the node, or the bastion), and for a node
/// behind a bastion the hint reaches it the way plumb does (ssh -J), since ssh-keyscan cannot.
Diagnostic HostKeyChanged(const SshOptions& o, const std::string& presented, const std::string& known_hosts);
Diagnostic HostKeyUnknown(const SshOptions& o, const std::string& presented, const std::string& known_hosts);

class SshShell : public Shell {
 public:
  explicit SshShell(SshOptions options);
  ~SshShell() override;
  SshShell(const SshShell&) = delete;
  SshShell& operator=(const SshShell&) = delete;

  /// Opens the session now (Run() does it on demand): TCP connect, key exchange, host key check,
  /// authentication, all within `connect_timeout`.
  Status Connect();
  /// Runs `command` on the node's login shell. On timeout the remote command is sent SIGKILL,
  /// the session is dropped, and the result is "ssh.timeout".
  Result<CommandOutput> Run(std::string_view command, std::chrono::milliseconds timeout) override;
  /// Runs `command` through a command loop (command_loop.h) started on the first call and
  /// kept on its own channel of this session: one request and one reply per call. Any error
  /// drops the loop with the session (the next call opens both again).
  Result<CommandOutput> RunRepeated(std::string_view command, std::chrono::milliseconds timeout) override;
  /// Closes the session (the next Run() reconnects).
  void Disconnect();
  bool connected() const;

  const SshOptions& options() const { return options_; }

  /// The open libssh session (nullptr when not connected), for the Bastion that carries other
  /// sessions' streams over this one; it must not be used by two threads at once.
  ssh_session_struct* native_session();

 private:
  /// What every command starts with: not cancelled, connected, and libssh's blocking calls
  /// clamped to `deadline`.
  Status Begin(std::chrono::steady_clock::time_point deadline);

  struct Impl;
  SshOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace plumb::transport
