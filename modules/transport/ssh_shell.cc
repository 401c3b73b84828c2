#include "modules/transport/ssh_shell.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>
#include <libssh/libssh.h>

#include "modules/transport/command_loop.h"

namespace plumb::transport {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// libssh's blocking calls wait at most the session timeout; set it to what is left of ours
// (seconds + microseconds; never 0, which libssh would read as "its default").
void SetSessionTimeout(ssh_session s, Clock::time_point deadline) {
  int ms = std::max(RemainingMs(deadline), 10);
  long sec = ms / 1000;
  long usec = (ms % 1000) * 1000L;
  ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &sec);
  ssh_options_set(s, SSH_OPTIONS_TIMEOUT_USEC, &usec);
}

// libssh initialises its crypto once per process; ssh_init is not safe to race.
void InitLibssh() {
  static std::once_flag once;
  std::call_once(once, [] { ssh_init(); });
}

// ssh_session_update_known_hosts appends to the file; serialise writers within this process so
// concurrent first contacts never interleave lines.
std::mutex& KnownHostsWriteMutex() {
  static std::mutex m;
  return m;
}

// Decrypting an OpenSSH key runs bcrypt_pbkdf (~0.1 s of CPU); a gather authenticates to
// hundreds of nodes with the same key. Load each key once per process, keep it unencrypted in
// memory only, and give every session its own copy (no ssh_key is shared between threads).
// Keyed by path and passphrase; a failed load is not cached.
Result<std::string> LoadKeyOnce(const std::string& path, const std::string& passphrase) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto k = std::make_pair(path, passphrase);
  if (auto it = cache.find(k); it != cache.end()) return it->second;
  ssh_key key = nullptr;
  const char* pass = passphrase.empty() ? nullptr : passphrase.c_str();
  if (ssh_pki_import_privkey_file(path.c_str(), pass, nullptr, nullptr, &key) != SSH_OK) {
    return Diagnostic::Error("ssh.auth", "cannot load key");
  }
  char* b64 = nullptr;
  int rc = ssh_pki_export_privkey_base64(key, nullptr, nullptr, nullptr, &b64);
  ssh_key_free(key);
  if (rc != SSH_OK || b64 == nullptr) return Diagnostic::Error("ssh.auth", "cannot load key");
  std::string blob(b64);
  std::memset(b64, 0, blob.size());
  ssh_string_free_char(b64);
  return cache.emplace(k, std::move(blob)).first->second;
}

// The command as the node's login shell gets it: under coreutils' `timeout -s KILL` set a second
// past our own deadline (when the node has `timeout`), so a command we gave up on is killed on the
// node, with its whole process group, instead of lingering. The command itself runs in /bin/sh.
std::string WithRemoteDeadline(std::string_view command, milliseconds timeout) {
  long secs = static_cast<long>((timeout.count() + 999) / 1000) + 1;
  return fmt::format(
      "t=; command -v timeout >/dev/null 2>&1 && t='timeout -s KILL {}'; exec $t /bin/sh -c {}",
      secs, ShellQuote(command));
}

std::string Where(const SshOptions& o) {
  return fmt::format("{} ({}@{}:{})", o.node.empty() ? o.host : o.node, o.user, o.host, o.port);
}

// The longest a command's output wait sleeps without looking at libssh's buffers (see Run).
constexpr milliseconds kMaxQuietWait{2000};

// A 32 KB SSH packet arrives in 4 KB socket reads, two per pass (see Run).
constexpr int kMaxSocketPasses = 32;

// Bytes (or a hang-up) waiting on the socket, without reading them.
bool SocketReadable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

bool Cancelled(const SshOptions& o) { return o.cancel != nullptr && o.cancel->is_set(); }

Diagnostic CancelledError(const SshOptions& o) {
  return Diagnostic::Error("ssh.cancelled", fmt::format("{}: cancelled (shutting down)", Where(o)));
}

struct FdResult {
  int fd = -1;
  Diagnostic error;
};

// Our own TCP connect, so that "refused", "timed out" and "unreachable" are told apart by errno
// (libssh folds them into one message) and the connect obeys the node's deadline exactly.
FdResult ConnectTcp(const SshOptions& o, Clock::time_point deadline) {
  FdResult r;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port = std::to_string(o.port);
  int gai = getaddrinfo(o.host.c_str(), port.c_str(), &hints, &res);
  if (gai != 0) {
    r.error = Diagnostic::Error(
        "ssh.io", fmt::format("{}: cannot resolve '{}': {}", Where(o), o.host, gai_strerror(gai)),
        {}, {}, "check the node's address in inventory.yaml");
    return r;
  }
  int last_errno = 0;
  bool timed_out = false;
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) { last_errno = errno; continue; }
    int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      // With the cancel signal, so a caller shutting down is not kept waiting for a node that
      // never answers.
      WaitResult w = WaitFd(fd, POLLOUT, o.cancel, deadline);
      if (w == WaitResult::kCancelled) {
        close(fd);
        freeaddrinfo(res);
        r.error = CancelledError(o);
        return r;
      }
      if (w == WaitResult::kTimeout) { timed_out = true; close(fd); break; }
      int err = errno;   // kError: poll's own
      if (w == WaitResult::kReady) {
        socklen_t len = sizeof err;
        err = 0;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      }
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc == 0) {
      // Back to blocking: libssh drives the socket with its own poll loop and timeouts.
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      r.fd = fd;
      freeaddrinfo(res);
      return r;
    }
    last_errno = errno;
    close(fd);
    if (last_errno == ETIMEDOUT) timed_out = true;
  }
  freeaddrinfo(res);
  if (timed_out) {
    r.error = Diagnostic::Error("ssh.timeout",
                                fmt::format("{}: connect timed out after {} ms", Where(o),
                                            std::chrono::duration_cast<milliseconds>(o.connect_timeout).count()),
                                {}, {},
                                "the node is down or unreachable (partition, firewall); "
                                "connect_timeout is set in inventory.yaml defaults.ssh");
  } else if (last_errno == ECONNREFUSED) {
    r.error = Diagnostic::Error("ssh.refused",
                                fmt::format("{}: connection refused", Where(o)), {}, {},
                                "sshd is not listening: the node is down, booting, or the port "
                                "is wrong");
  } else {
    r.error = Diagnostic::Error(
        "ssh.io", fmt::format("{}: cannot connect: {}", Where(o), std::strerror(last_errno)), {},
        {}, "check the node's address and the network path to it");
  }
  return r;
}

std::string ServerKeyFingerprint(ssh_session s, std::string* type) {
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(s, &key) != SSH_OK || key == nullptr) return "?";
  *type = ssh_key_type_to_char(ssh_key_type(key));
  unsigned char* hash = nullptr;
  size_t hlen = 0;
  std::string fp = "?";
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) == 0) {
    char* s_fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
    if (s_fp != nullptr) {
      fp = s_fp;
      ssh_string_free_char(s_fp);
    }
    ssh_clean_pubkey_hash(&hash);
  }
  ssh_key_free(key);
  return fp;
}

// How a wait for a channel's output ended.
enum class ReadEnd { kComplete, kEof, kCancelled, kTimeout, kIoError, kPollError };

// Reads stdout and stderr of `ch` into `got` until `complete()` says the caller has what it
// waits for (when given), the channel's EOF, a cancel, the deadline, or an error. Drains
// whatever libssh has buffered on both streams, otherwise waits on the socket (and the cancel
// signal). Reading (not callbacks) lets libssh grow the window. The wait wakes only when the
// node sends something: a slow node costs no CPU while it works (an earlier version woke every
// 200 ms to look at a cancel flag, which was most of a steady watch read's CPU).
ReadEnd ReadChannel(ssh_session s, ssh_channel ch, const SshOptions& o, Clock::time_point deadline,
                    CommandOutput& got, const std::function<bool()>& complete) {
  char buf[16384];
  for (;;) {
    bool progressed = true;
    int socket_passes = 0;   // passes made only because the socket was readable, in a row
    while (progressed) {
      progressed = false;
      int n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 0);
      if (n == SSH_ERROR) return ReadEnd::kIoError;
      if (n > 0) { got.out.append(buf, n); progressed = true; }
      // A read of one stream that finds its buffer empty reads the socket, and the packets it
      // completes may belong to the other stream (or be the EOF): the stderr read below can
      // leave stdout data in libssh's buffer, which no poll() on the socket would report. So
      // bytes waiting on the socket now mean one more pass (a bounded number in a row: a
      // socket that stays readable while libssh takes nothing from it, a hang-up libssh has
      // not noticed, falls through to the wait and the deadline instead of spinning here).
      if (SocketReadable(ssh_get_fd(s)) && socket_passes < kMaxSocketPasses) {
        progressed = true;
        ++socket_passes;
      }
      int m = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 1);
      if (m == SSH_ERROR) return ReadEnd::kIoError;
      if (m > 0) { got.err.append(buf, m); progressed = true; }
      if (n > 0 || m > 0) socket_passes = 0;
    }
    if (complete && complete()) return ReadEnd::kComplete;
    if (ssh_channel_is_eof(ch) || ssh_channel_is_closed(ch)) return ReadEnd::kEof;
    if (Cancelled(o)) return ReadEnd::kCancelled;
    if (RemainingMs(deadline) == 0) return ReadEnd::kTimeout;
    // kReady, kTimeout and kCancelled are all seen at the top of the loop. At most
    // kMaxQuietWait at a time: a safety net for bytes that reach the socket between the check
    // above and the stderr read that takes them (microseconds), which would otherwise wait for
    // the node's next packet. A node quiet for a minute costs 30 wake-ups, not 300.
    auto until = std::min(deadline, Clock::now() + kMaxQuietWait);
    if (WaitFd(ssh_get_fd(s), POLLIN, o.cancel, until) == WaitResult::kError) return ReadEnd::kPollError;
  }
}

// A command that failed mid-way: past its deadline it is a timeout, otherwise the connection broke.
Diagnostic MidCommandError(const SshOptions& o, const std::string& why, Clock::time_point deadline,
                           milliseconds timeout, const std::string& what) {
  if (RemainingMs(deadline) == 0)
    return Diagnostic::Error("ssh.timeout",
                             fmt::format("{}: command timed out after {} ms ({})", Where(o), timeout.count(), what));
  return Diagnostic::Error("ssh.io", fmt::format("{}: {}: {}", Where(o), what, why), {}, {},
                           "the connection broke: the node may be rebooting or overloaded");
}

Diagnostic TimedOutAndKilled(const SshOptions& o, milliseconds timeout) {
  return Diagnostic::Error(
      "ssh.timeout", fmt::format("{}: command timed out after {} ms and was killed", Where(o), timeout.count()),
      {}, {}, "the node is overloaded, partitioned, or the command hangs; command_timeout is set in "
              "inventory.yaml defaults.ssh");
}

}  // namespace

struct SshShell::Impl {
  ssh_session session = nullptr;
  ssh_channel loop = nullptr;   ///< the command loop's channel (RunRepeated), while open

  void DropLoop() {
    if (loop != nullptr) {
      ssh_channel_free(loop);
      loop = nullptr;
    }
  }
  void Drop() {
    DropLoop();   // a channel is freed before its session
    if (session != nullptr) {
      if (ssh_is_connected(session)) ssh_disconnect(session);
      ssh_free(session);  // also closes the socket we handed over with SSH_OPTIONS_FD
      session = nullptr;
    }
  }
};

Diagnostic HostKeyChanged(const SshOptions& o, const std::string& presented, const std::string& kh) {
  const char* who = o.bastion ? "bastion" : "node";
  const std::string jump = o.via != nullptr ? o.via->JumpSpec() : std::string();
  return Diagnostic::Error(
      "ssh.hostkey-changed",
      fmt::format("{}: HOST KEY CHANGED: the {} presented {} but {} records a different key for {}{}. "
                  "Someone may be intercepting the connection; refusing to connect",
                  Where(o), who, presented, kh, o.host,
                  jump.empty() ? std::string() : " (reached through the bastion " + jump + ")"),
      {}, {},
      fmt::format("if the {} was reinstalled, verify the new key out of band, then remove the old "
                  "entry (ssh-keygen -R {} -f {}); --accept-new-host-keys never replaces a changed key",
                  who, o.host, kh));
}

Diagnostic HostKeyUnknown(const SshOptions& o, const std::string& presented, const std::string& kh) {
  const char* who = o.bastion ? "bastion" : "node";
  const std::string jump = o.via != nullptr ? o.via->JumpSpec() : std::string();
  // A node behind a bastion is reached only through it: ssh-keyscan from here cannot ask it.
  const std::string ask =
      jump.empty()
          ? fmt::format("ssh-keyscan -t ed25519 -p {} {}", o.port, o.host)
          : fmt::format("it is reached only through the bastion {}: ssh -J {} -p {} -o UserKnownHostsFile={} "
                        "{}@{} true shows the fingerprint and records the key once you answer yes",
                        jump, jump, o.port, kh, o.user, o.host);
  return Diagnostic::Error(
      "ssh.hostkey",
      fmt::format("{}: unknown host key: the {} presented {}; {} has no entry for {}", Where(o), who,
                  presented, kh, o.host),
      {}, {},
      fmt::format("verify the fingerprint out of band and add the key to {} ({}), or rerun with "
                  "--accept-new-host-keys to record keys of {}s seen for the first time",
                  kh, ask, who));
}

SshShell::SshShell(SshOptions options) : options_(std::move(options)), impl_(new Impl) {
  InitLibssh();
}

SshShell::~SshShell() { Disconnect(); }

bool SshShell::connected() const { return impl_->session != nullptr; }

ssh_session_struct* SshShell::native_session() { return impl_->session; }

void SshShell::Disconnect() { impl_->Drop(); }

Status SshShell::Connect() {
  if (impl_->session != nullptr) return OkStatus();
  const SshOptions& o = options_;
  const auto deadline = Clock::now() + o.connect_timeout;

  FdResult tcp;
  if (o.via != nullptr) {
    auto stream = o.via->OpenStream(o.node.empty() ? o.host : o.node, o.host, o.port, deadline);
    if (!stream.ok()) return stream.error();
    tcp.fd = *stream;
  } else {
    tcp = ConnectTcp(o, deadline);
  }
  if (tcp.fd < 0) return tcp.error;

  ssh_session s = ssh_new();
  if (s == nullptr) {
    close(tcp.fd);
    return Diagnostic::Error("ssh.io", Where(o) + ": cannot allocate an SSH session");
  }
  impl_->session = s;
  // Fail closes the session (and the fd libssh now owns) and returns the diagnostic.
  auto fail = [this](Diagnostic d) -> Status {
    impl_->Drop();
    return d;
  };

  bool no = false;
  int port = o.port;
  socket_t fd = tcp.fd;
  // Never read ~/.ssh/config or /etc/ssh/ssh_config: the inventory is the only configuration.
  ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no);
  ssh_options_set(s, SSH_OPTIONS_FD, &fd);
  ssh_options_set(s, SSH_OPTIONS_HOST, o.host.c_str());
  ssh_options_set(s, SSH_OPTIONS_PORT, &port);
  ssh_options_set(s, SSH_OPTIONS_USER, o.user.c_str());
  SetSessionTimeout(s, deadline);
  if (!o.known_hosts.empty()) {
    ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, o.known_hosts.c_str());
    // Only the inventory's file decides; the machine-wide file must not vouch for a node.
    ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, o.known_hosts.c_str());
  }
  if (ssh_options_set(s, SSH_OPTIONS_KEY_EXCHANGE, o.kex.c_str()) != SSH_OK) {
    return fail(Diagnostic::Error("ssh.io", fmt::format("{}: unsupported key exchange list '{}'",
                                                        Where(o), o.kex)));
  }

  if (ssh_connect(s) != SSH_OK) {
    std::string why = ssh_get_error(s);
    bool expired = RemainingMs(deadline) == 0 || why.find("imeout") != std::string::npos;
    if (expired) {
      return fail(Diagnostic::Error("ssh.timeout",
                                    fmt::format("{}: SSH handshake timed out: {}", Where(o), why),
                                    {}, {}, "the node accepted TCP but sshd did not answer in time"));
    }
    if (why.find("refused") != std::string::npos) {
      return fail(Diagnostic::Error("ssh.refused", fmt::format("{}: {}", Where(o), why)));
    }
    return fail(Diagnostic::Error("ssh.io", fmt::format("{}: SSH handshake failed: {}", Where(o), why),
                                  {}, {}, "the node's sshd closed the connection or speaks no "
                                          "common key exchange"));
  }

  // Host key: verified before any credential is offered.
  std::string key_type = "?";
  std::string fp = ServerKeyFingerprint(s, &key_type);
  std::string kh = o.known_hosts.empty() ? "~/.ssh/known_hosts" : o.known_hosts;
  switch (ssh_session_is_known_server(s)) {
    case SSH_KNOWN_HOSTS_OK:
      break;
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
      return fail(HostKeyChanged(o, key_type + " " + fp, kh));
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      if (o.accept_new_hostkeys) {
        std::lock_guard<std::mutex> lock(KnownHostsWriteMutex());
        if (ssh_session_update_known_hosts(s) != SSH_OK) {
          return fail(Diagnostic::Error(
              "ssh.hostkey", fmt::format("{}: cannot record the new host key in {}: {}",
                                         Where(o), kh, ssh_get_error(s))));
        }
        break;
      }
      return fail(HostKeyUnknown(o, key_type + " " + fp, kh));
    case SSH_KNOWN_HOSTS_ERROR:
    default:
      return fail(Diagnostic::Error(
          "ssh.hostkey", fmt::format("{}: cannot check the host key against {}: {}", Where(o),
                                     kh, ssh_get_error(s))));
  }

  // Authentication: the key file when one is configured, else the agent.
  int rc;
  if (!o.identity.empty()) {
    ssh_key key = nullptr;
    auto blob = LoadKeyOnce(o.identity, o.identity_passphrase);
    if (!blob.ok() ||
        ssh_pki_import_privkey_base64(blob->c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK) {
      return fail(Diagnostic::Error(
          "ssh.auth",
          fmt::format("{}: cannot load the private key {} (missing, unreadable, or encrypted and "
                      "no or a wrong passphrase given)",
                      Where(o), o.identity),
          {}, {},
          "check defaults.ssh.identity; for an encrypted key load it into ssh-agent and leave "
          "identity empty, or set PLUMB_SSH_PASSPHRASE"));
    }
    rc = ssh_userauth_publickey(s, nullptr, key);
    ssh_key_free(key);
  } else {
    rc = ssh_userauth_agent(s, nullptr);
  }
  if (rc != SSH_AUTH_SUCCESS) {
    if (rc == SSH_AUTH_ERROR && RemainingMs(deadline) == 0) {
      return fail(Diagnostic::Error("ssh.timeout",
                                    fmt::format("{}: authentication timed out", Where(o))));
    }
    return fail(Diagnostic::Error(
        "ssh.auth",
        fmt::format("{}: authentication as '{}' failed ({})", Where(o), o.user,
                    o.identity.empty() ? "ssh-agent" : "key " + o.identity),
        {}, {},
        o.identity.empty() ? "is ssh-agent running (SSH_AUTH_SOCK) with a key the node accepts?"
                           : "is the public key in the node's authorized_keys for this user?"));
  }
  return OkStatus();
}

Status SshShell::Begin(Clock::time_point deadline) {
  if (Cancelled(options_)) return CancelledError(options_);
  if (Status st = Connect(); !st.ok()) return st;
  // Blocking channel calls below wait at most the session timeout: clamp it to our deadline.
  SetSessionTimeout(impl_->session, deadline);
  return OkStatus();
}

Result<CommandOutput> SshShell::Run(std::string_view command, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  if (Status st = Begin(deadline); !st.ok()) return st.error();
  ssh_session s = impl_->session;
  const SshOptions& o = options_;

  ssh_channel ch = ssh_channel_new(s);
  auto io_error = [&](const std::string& what) -> Diagnostic {
    std::string why = ssh_get_error(s);
    if (ch != nullptr) ssh_channel_free(ch);
    impl_->Drop();  // a session that failed mid-command is not trusted again
    return MidCommandError(o, why, deadline, timeout, what);
  };
  if (ch == nullptr) return io_error("cannot create a channel");
  if (ssh_channel_open_session(ch) != SSH_OK) return io_error("cannot open a channel");
  std::string cmd = WithRemoteDeadline(command, timeout);
  if (ssh_channel_request_exec(ch, cmd.c_str()) != SSH_OK) return io_error("cannot start the command");

  CommandOutput out;
  switch (ReadChannel(s, ch, o, deadline, out, nullptr)) {
    case ReadEnd::kComplete:
    case ReadEnd::kEof: break;
    case ReadEnd::kIoError: return io_error("reading output failed");
    case ReadEnd::kPollError: return io_error("poll failed");
    case ReadEnd::kCancelled:
      // Shutting down: the session is dropped like a timed-out one (the node-side deadline of
      // WithRemoteDeadline ends the command there).
      ssh_channel_free(ch);
      impl_->Drop();
      return CancelledError(o);
    case ReadEnd::kTimeout:
      // Ask sshd to kill the command, then drop the session: whatever is still in flight
      // belongs to a command we gave up on. Many sshds refuse "signal" requests (Debian 12's:
      // "session signalling requires privilege separation"), so the node-side deadline of
      // WithRemoteDeadline is what really ends the command, a second after this one.
      ssh_channel_request_send_signal(ch, "KILL");
      ssh_channel_free(ch);
      impl_->Drop();
      return TimedOutAndKilled(o, timeout);
  }
  out.exit_status = ssh_channel_get_exit_status(ch);  // waits for exit-status after EOF
  if (out.exit_status < 0) {
    // No exit-status: killed by a signal (exit-signal) or the connection dropped.
    out.exit_status = 255;
  }
  ssh_channel_send_eof(ch);
  ssh_channel_close(ch);
  ssh_channel_free(ch);
  return out;
}

Result<CommandOutput> SshShell::RunRepeated(std::string_view command, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  if (Status st = Begin(deadline); !st.ok()) return st.error();
  ssh_session s = impl_->session;
  const SshOptions& o = options_;

  auto io_error = [&](const std::string& what) -> Diagnostic {
    std::string why = ssh_get_error(s);
    impl_->Drop();  // the loop and its session are not trusted again
    return MidCommandError(o, why, deadline, timeout, what);
  };
  if (impl_->loop == nullptr) {
    ssh_channel ch = ssh_channel_new(s);
    if (ch == nullptr) return io_error("cannot create a channel");
    impl_->loop = ch;   // freed by Drop from here on
    if (ssh_channel_open_session(ch) != SSH_OK) return io_error("cannot open a channel");
    std::string loop = "exec /bin/sh -c " + ShellQuote(CommandLoopScript());
    if (ssh_channel_request_exec(ch, loop.c_str()) != SSH_OK) return io_error("cannot start the command loop");
  }
  ssh_channel ch = impl_->loop;
  // Bytes after the previous reply (a background process it left behind) belong to no request:
  // dropped, so each reply is what arrives after its own request.
  {
    char junk[4096];
    for (int is_stderr : {0, 1})
      while (ssh_channel_read_nonblocking(ch, junk, sizeof junk, is_stderr) > 0) {
      }
  }
  const std::string marker = NewLoopMarker();
  // The node kills the command a second past our deadline, as WithRemoteDeadline does for Run:
  // a command that hangs is our timeout, not an exit status 137.
  const std::string request =
      CommandLoopRequest(command, marker, static_cast<long>((timeout.count() + 999) / 1000) + 1);
  for (size_t off = 0; off < request.size();) {
    // A blocking write waits at most the session timeout, clamped to what is left each time.
    if (RemainingMs(deadline) == 0) {
      impl_->Drop();
      return TimedOutAndKilled(o, timeout);
    }
    SetSessionTimeout(s, deadline);
    int w = ssh_channel_write(ch, request.data() + off, static_cast<uint32_t>(request.size() - off));
    if (w == SSH_ERROR) return io_error("cannot send the command to the loop");
    off += static_cast<size_t>(w);
  }

  // The loop's stdout is one stream for every command: this reply ends at its marker's line.
  // Its stderr is too, and sshd may forward a command's stderr after the reply: what arrives
  // while this command runs is given to it (diagnostics only; the probe reads stdout).
  CommandOutput got;
  std::optional<LoopReply> reply;
  auto complete = [&] {
    reply = TakeLoopReply(got.out, marker);
    return reply.has_value();
  };
  switch (ReadChannel(s, ch, o, deadline, got, complete)) {
    case ReadEnd::kComplete: break;
    case ReadEnd::kEof: return io_error("the command loop ended");
    case ReadEnd::kIoError: return io_error("reading output failed");
    case ReadEnd::kPollError: return io_error("poll failed");
    case ReadEnd::kCancelled:
      impl_->Drop();
      return CancelledError(o);
    case ReadEnd::kTimeout:
      // The command's node-side `timeout -s KILL` ends it; the loop and session are dropped.
      impl_->Drop();
      return TimedOutAndKilled(o, timeout);
  }
  CommandOutput out;
  out.out = std::move(reply->out);
  out.err = std::move(got.err);
  // 124-137 from `timeout -s KILL` (killed: 137) are exit statuses like any other, as in Run.
  out.exit_status = reply->exit_status;
  // A big reply grew this channel's buffers for good (command_loop.h): closing the channel
  // frees them and ends the loop on the node (its stdin closes); the session stays open.
  if (!KeepLoopAfter(out.out.size() + out.err.size() + got.out.size())) impl_->DropLoop();
  return out;
}

}  // namespace plumb::transport
