#include "modules/transport/ssh_jump.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <system_error>
#include <condition_variable>
#include <deque>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <libssh/libssh.h>
// For ssh_send_keepalive only: declared with the server API, it is a plain global request
// (keepalive@openssh.com, want-reply) that works on a client session too.
#include <libssh/server.h>

namespace plumb::transport {
namespace {

using Clock = std::chrono::steady_clock;

// How often the loop looks at channels still opening (libssh answers SSH_AGAIN until the
// bastion replies), and how long it sleeps with nothing to do but carry bytes.
constexpr int kOpeningPollMs = 5;
constexpr int kIdlePollMs = 1000;
// How long a channel given up on while opening waits for the bastion's answer, so that it
// can be closed (its remote id comes with the answer), before it is only freed.
constexpr auto kClosingGiveUp = std::chrono::seconds(120);

// One node's stream, from OpenStream's call to its answer. Guarded by Impl::mu except
// `channel`, which only the loop touches.
struct Request {
  std::string node, host;
  int port = 22;
  Clock::time_point deadline;
  bool answered = false;
  bool abandoned = false;   ///< the caller stopped waiting: an fd that comes later is closed
  Result<int> result = Diagnostic::Error("ssh.io", "not answered");
  ssh_channel channel = nullptr;
};

// A channel whose open timed out: the bastion may still confirm it, and a confirmed channel
// is closed (CHANNEL_CLOSE needs the remote id the confirmation brings), a refused one freed.
struct Closing {
  ssh_channel channel = nullptr;
  std::string host;
  int port = 22;
  Clock::time_point give_up;
};

// A carried connection: the channel to the node, our end of the socketpair (non-blocking), and
// the bytes read from one side and not yet written to the other, at most kStreamBuffer each.
struct Tunnel {
  std::string node;
  ssh_channel channel = nullptr;
  int fd = -1;
  std::string down;          ///< channel -> fd
  std::string up;            ///< fd -> channel
  bool channel_eof = false;  ///< the node's side ended: nothing more to read from the channel
  bool fd_eof = false;       ///< the node's session closed its end
  bool broken = false;       ///< a write or read on either side failed
  short polled = 0;          ///< the events the loop's ssh_event has for fd (0: not in it)
};

int DrainWake(socket_t fd, int /*revents*/, void* /*userdata*/) {
  uint64_t v;
  while (read(fd, &v, sizeof v) > 0) {
  }
  return 0;
}

// A tunnel's fd only wakes the loop, which then moves every tunnel's bytes (Pump).
int Woken(socket_t /*fd*/, int /*revents*/, void* /*userdata*/) { return 0; }

bool WouldBlock(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

// Moves what can move now without blocking, both ways; false when nothing did.
bool PumpOnce(Tunnel& t) {
  bool moved = false;
  char buf[16384];
  // The node's bytes: channel -> buffer -> fd.
  if (!t.channel_eof && t.down.size() < Bastion::kStreamBuffer) {
    const size_t room = std::min(sizeof buf, Bastion::kStreamBuffer - t.down.size());
    int n = ssh_channel_read_nonblocking(t.channel, buf, static_cast<uint32_t>(room), 0);
    if (n > 0) {
      t.down.append(buf, static_cast<size_t>(n));
      moved = true;
    } else if (n == SSH_EOF || n == SSH_ERROR || (n == 0 && ssh_channel_is_closed(t.channel))) {
      t.channel_eof = true;
    }
  }
  if (!t.down.empty()) {
    ssize_t w = send(t.fd, t.down.data(), t.down.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      t.down.erase(0, static_cast<size_t>(w));
      moved = true;
    } else if (w < 0 && !WouldBlock(errno)) {
      t.broken = true;   // the node's session is gone
    }
  }
  // The node session's bytes: fd -> buffer -> channel, no more than the channel's window.
  if (!t.fd_eof && t.up.size() < Bastion::kStreamBuffer) {
    const size_t room = std::min(sizeof buf, Bastion::kStreamBuffer - t.up.size());
    ssize_t r = recv(t.fd, buf, room, MSG_DONTWAIT);
    if (r > 0) {
      t.up.append(buf, static_cast<size_t>(r));
      moved = true;
    } else if (r == 0) {
      t.fd_eof = true;
    } else if (!WouldBlock(errno)) {
      t.broken = true;
    }
  }
  if (!t.up.empty() && !ssh_channel_is_closed(t.channel)) {
    const size_t n = std::min<size_t>(t.up.size(), ssh_channel_window_size(t.channel));
    if (n > 0) {
      int w = ssh_channel_write(t.channel, t.up.data(), static_cast<uint32_t>(n));
      if (w > 0) {
        t.up.erase(0, static_cast<size_t>(w));
        moved = true;
      } else if (w == SSH_ERROR) {
        t.broken = true;
      }
    }
  }
  return moved;
}

// A tunnel is done when either side ended and what it sent has been passed on.
bool Done(const Tunnel& t) {
  return t.broken || (t.channel_eof && t.down.empty()) || (t.fd_eof && t.up.empty()) ||
         (t.fd_eof && ssh_channel_is_closed(t.channel));
}

// The events to wait for on a tunnel's fd: room to read into, bytes to write out.
short Wanted(const Tunnel& t) {
  short ev = 0;
  if (!t.fd_eof && t.up.size() < Bastion::kStreamBuffer) ev |= POLLIN;
  if (!t.down.empty()) ev |= POLLOUT;
  return ev;
}

}  // namespace

struct Bastion::Impl {
  SshOptions options;
  BastionKeepalive keepalive;
  std::string name;   ///< "bastion jump@host:port", for messages

  mutable std::mutex mu;
  std::condition_variable answered;
  std::deque<std::shared_ptr<Request>> incoming;   ///< under mu
  bool stop = false;                               ///< under mu
  std::string last_drop;                           ///< under mu
  std::thread loop;                                ///< started by the first OpenStream
  int wake = -1;                                   ///< eventfd: a request, or stop
  std::atomic<size_t> streams{0};
  std::atomic<size_t> closing_count{0};
  std::atomic<int> opened{0};

  // The loop thread's own.
  std::unique_ptr<SshShell> shell;
  ssh_event event = nullptr;
  std::vector<std::shared_ptr<Request>> opening;
  std::vector<Closing> closing;
  std::list<Tunnel> tunnels;
  ssh_counter_struct received{};   ///< libssh counts the bastion's packets here
  uint64_t packets_seen = 0;
  Clock::time_point next_keepalive;
  int unanswered = 0;

  void Wake() {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake, &one, sizeof one);
  }

  void Answer(const std::shared_ptr<Request>& r, Result<int> result) {
    std::lock_guard<std::mutex> lock(mu);
    if (r->abandoned && result.ok()) close(*result);   // nobody will take it
    r->result = std::move(result);
    r->answered = true;
    answered.notify_all();
  }

  Diagnostic Failed(const Request& r, const Diagnostic& why) const {
    Diagnostic d = why;
    d.message = fmt::format("{}: through {}: {}", r.node, name, why.message);
    return d;
  }

  // Opens the bastion session (blocking, up to its connect timeout) and the event loop on it.
  Status Connect() {
    if (shell == nullptr) shell = std::make_unique<SshShell>(options);
    if (Status st = shell->Connect(); !st.ok()) return st;
    ssh_session s = shell->native_session();
    ssh_set_blocking(s, 0);
    // Bytes the bastion never acknowledges end the connection as a silence would: a thread
    // stuck in a write to a dead bastion is released by the kernel.
    const unsigned user_timeout = static_cast<unsigned>(keepalive.interval.count() * keepalive.count);
    setsockopt(ssh_get_fd(s), IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
    received = {};
    ssh_set_counters(s, nullptr, &received);
    packets_seen = 0;
    unanswered = 0;
    next_keepalive = Clock::now() + keepalive.interval;
    event = ssh_event_new();
    ssh_event_add_session(event, s);
    ssh_event_add_fd(event, wake, POLLIN, DrainWake, nullptr);
    ++opened;
    return OkStatus();
  }

  void Watch(Tunnel& t) {
    const short want = Wanted(t);
    if (want == t.polled) return;
    if (t.polled != 0) ssh_event_remove_fd(event, t.fd);
    if (want != 0) ssh_event_add_fd(event, t.fd, want, Woken, nullptr);
    t.polled = want;
  }

  void CloseTunnel(Tunnel& t) {
    if (event != nullptr && t.polled != 0) ssh_event_remove_fd(event, t.fd);
    t.polled = 0;
    if (!ssh_channel_is_closed(t.channel)) ssh_channel_close(t.channel);
    ssh_channel_free(t.channel);
    close(t.fd);   // the node's session reads EOF
    --streams;
  }

  // The session broke (or we stop): every stream it carried ends, every open fails.
  void Drop(const Diagnostic& why) {
    {
      std::lock_guard<std::mutex> lock(mu);
      last_drop = why.message;
    }
    for (Tunnel& t : tunnels) CloseTunnel(t);
    tunnels.clear();
    for (auto& r : opening) {
      if (r->channel != nullptr) ssh_channel_free(r->channel);
      r->channel = nullptr;
      Answer(r, Failed(*r, why));
    }
    opening.clear();
    for (Closing& c : closing) ssh_channel_free(c.channel);
    closing.clear();
    closing_count = 0;
    if (event != nullptr) {
      ssh_event_remove_fd(event, wake);
      if (shell != nullptr && shell->native_session() != nullptr)
        ssh_event_remove_session(event, shell->native_session());
      ssh_event_free(event);
      event = nullptr;
    }
    if (shell != nullptr) {
      if (shell->native_session() != nullptr) ssh_set_counters(shell->native_session(), nullptr, nullptr);
      shell->Disconnect();
    }
  }

  // Joins an opened channel to a fresh socketpair; the caller gets the other end.
  Result<int> Join(const std::shared_ptr<Request>& r) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
        fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK) != 0) {
      const int err = errno;
      ssh_channel_close(r->channel);
      ssh_channel_free(r->channel);
      r->channel = nullptr;
      return Failed(*r, Diagnostic::Error("ssh.io", fmt::format("socketpair: {}", std::strerror(err))));
    }
    Tunnel t;
    t.node = r->node;
    t.channel = r->channel;
    t.fd = sv[0];   // ours, non-blocking; the node's session gets sv[1] as it was (blocking)
    r->channel = nullptr;
    tunnels.push_back(std::move(t));
    Watch(tunnels.back());
    ++streams;
    return sv[1];
  }

  // One step of every channel still opening: opened, refused, or still waiting.
  void StepOpening() {
    ssh_session s = shell->native_session();
    std::vector<std::shared_ptr<Request>> still;
    for (auto& r : opening) {
      if (r->channel == nullptr) r->channel = ssh_channel_new(s);
      int rc = r->channel == nullptr ? SSH_ERROR
                                     : ssh_channel_open_forward(r->channel, r->host.c_str(), r->port,
                                                                "127.0.0.1", 22);
      if (rc == SSH_OK && Clock::now() >= r->deadline) {
        // Opened, but past the caller's deadline (a loaded machine): the caller is told it
        // timed out, as it would be a moment later, so close it now, confirmed and all.
        ssh_channel_close(r->channel);
        ssh_channel_free(r->channel);
        r->channel = nullptr;
        Answer(r, Failed(*r, Diagnostic::Error("ssh.timeout",
                                               fmt::format("connecting to {}:{} timed out", r->host, r->port),
                                               {}, {}, "the node is down or unreachable from the bastion")));
        continue;
      }
      if (rc == SSH_OK) {
        Answer(r, Join(r));
        continue;
      }
      if (rc == SSH_AGAIN && Clock::now() < r->deadline) {
        still.push_back(r);
        continue;
      }
      std::string why = rc == SSH_AGAIN ? "" : ssh_get_error(s);
      if (rc == SSH_AGAIN) {
        // Still opening on the bastion: keep asking, to close it once it is confirmed.
        closing.push_back(Closing{r->channel, r->host, r->port, Clock::now() + kClosingGiveUp});
        closing_count = closing.size();
      } else if (r->channel != nullptr) {
        ssh_channel_free(r->channel);   // refused: nothing open on the bastion
      }
      r->channel = nullptr;
      Diagnostic d;
      if (rc == SSH_AGAIN) {
        d = Diagnostic::Error("ssh.timeout", fmt::format("connecting to {}:{} timed out", r->host, r->port),
                              {}, {}, "the node is down or unreachable from the bastion");
      } else if (why.find("efused") != std::string::npos) {
        d = Diagnostic::Error("ssh.refused", fmt::format("{}:{}: connection refused ({})", r->host, r->port, why),
                              {}, {}, "sshd is not listening: the node is down, booting, or the port is wrong");
      } else {
        d = Diagnostic::Error("ssh.io", fmt::format("cannot reach {}:{}: {}", r->host, r->port, why), {}, {},
                              "check the node's address as the bastion resolves it, and that the "
                              "bastion's sshd allows TCP forwarding (AllowTcpForwarding)");
      }
      Answer(r, Failed(*r, d));
    }
    opening.swap(still);
  }

  // Channels given up on while opening: closed once the bastion confirms them, freed once it
  // refuses them (or after kClosingGiveUp without an answer).
  void StepClosing() {
    std::vector<Closing> still;
    for (Closing& c : closing) {
      int rc = ssh_channel_open_forward(c.channel, c.host.c_str(), c.port, "127.0.0.1", 22);
      if (rc == SSH_AGAIN && Clock::now() < c.give_up) {
        still.push_back(c);
        continue;
      }
      if (rc == SSH_OK) ssh_channel_close(c.channel);
      ssh_channel_free(c.channel);
    }
    closing.swap(still);
    closing_count = closing.size();
  }

  // Moves every stream's bytes, then ends the streams whose node or caller went away.
  void Pump() {
    for (auto it = tunnels.begin(); it != tunnels.end();) {
      // A few rounds: a write that frees room lets the next read in, but one busy stream
      // must not keep the loop from the others.
      for (int round = 0; round < 4 && PumpOnce(*it); ++round) {
      }
      if (Done(*it)) {
        CloseTunnel(*it);
        it = tunnels.erase(it);
        continue;
      }
      Watch(*it);
      ++it;
    }
  }

  // Any packet from the bastion shows it is there; a silent one is asked, and after
  // keepalive.count unanswered questions it is gone. Returns the ms until the next look.
  int Keepalive(const Clock::time_point now) {
    if (received.in_packets != packets_seen) {
      packets_seen = received.in_packets;
      unanswered = 0;
      next_keepalive = now + keepalive.interval;
    }
    if (now >= next_keepalive) {
      if (unanswered >= keepalive.count) {
        const double silent = std::chrono::duration<double>(keepalive.interval * keepalive.count).count();
        Drop(Diagnostic::Error(
            "ssh.timeout",
            fmt::format("the bastion stopped answering: no reply to {} keepalives in {:g} s", keepalive.count,
                        silent),
            {}, {}, "the bastion or the network to it is down; the next read opens it again"));
        return kIdlePollMs;
      }
      // Twice: a first call only collects the answer to the previous request (libssh keeps
      // one global request pending at a time); the second then sends a new one. With a request
      // still unanswered, both only look for its answer.
      ssh_session s = shell->native_session();
      ssh_send_keepalive(s);
      ssh_send_keepalive(s);
      ++unanswered;
      next_keepalive = now + keepalive.interval;
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(next_keepalive - now).count();
    return static_cast<int>(std::clamp<long long>(ms, 0, kIdlePollMs));
  }

  bool SessionUp() {
    if (shell == nullptr || shell->native_session() == nullptr || event == nullptr) return false;
    ssh_session s = shell->native_session();
    return ssh_is_connected(s) && (ssh_get_status(s) & (SSH_CLOSED | SSH_CLOSED_ERROR)) == 0;
  }

  void Run() {
    for (;;) {
      std::deque<std::shared_ptr<Request>> fresh;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (stop) break;
        fresh.swap(incoming);
      }
      if (!fresh.empty() && !SessionUp()) {
        if (event != nullptr) Drop(Diagnostic::Error("ssh.io", "the bastion session broke"));
        if (Status st = Connect(); !st.ok()) {
          // The bastion's own error names it already: "n3: bastion 10.0.0.1 (...): unknown host key".
          for (auto& r : fresh) {
            Diagnostic d = st.error();
            d.message = r->node + ": " + d.message;
            Answer(r, std::move(d));
          }
          fresh.clear();
        }
      }
      for (auto& r : fresh) opening.push_back(r);
      if (event == nullptr) {
        pollfd p{wake, POLLIN, 0};
        if (poll(&p, 1, kIdlePollMs) > 0) DrainWake(wake, 0, nullptr);
        continue;
      }
      StepOpening();
      StepClosing();
      Pump();
      int wait_ms = Keepalive(Clock::now());
      if (event == nullptr) continue;   // dropped: the bastion stopped answering
      if (!opening.empty() || !closing.empty()) wait_ms = std::min(wait_ms, kOpeningPollMs);
      ssh_event_dopoll(event, wait_ms);
      Pump();
      if (!SessionUp()) Drop(Diagnostic::Error("ssh.io", "the bastion session broke", {}, {},
                                               "the bastion rebooted or dropped the connection; "
                                               "the next read opens it again"));
    }
    Drop(Diagnostic::Error("ssh.cancelled", "shutting down"));
  }
};

Bastion::Bastion(SshOptions options, BastionKeepalive keepalive) : impl_(new Impl) {
  impl_->options = std::move(options);
  impl_->options.via = nullptr;   // one hop only: no bastion behind a bastion
  impl_->options.bastion = true;  // its host key messages name the bastion, not a node
  impl_->keepalive = keepalive;
  if (impl_->keepalive.interval < std::chrono::milliseconds(100)) impl_->keepalive.interval = std::chrono::milliseconds(100);
  if (impl_->keepalive.count < 1) impl_->keepalive.count = 1;
  const SshOptions& o = impl_->options;
  impl_->name = fmt::format("bastion {}@{}:{}", o.user, o.host, o.port);
  impl_->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (impl_->wake < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

Bastion::~Bastion() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->Wake();
  if (impl_->loop.joinable()) impl_->loop.join();
  close(impl_->wake);
}

Result<int> Bastion::OpenStream(const std::string& node, const std::string& host, int port,
                                Clock::time_point deadline) {
  auto r = std::make_shared<Request>();
  r->node = node;
  r->host = host;
  r->port = port;
  r->deadline = deadline;
  std::unique_lock<std::mutex> lock(impl_->mu);
  if (impl_->stop) return Diagnostic::Error("ssh.cancelled", node + ": shutting down");
  if (!impl_->loop.joinable()) impl_->loop = std::thread([this] { impl_->Run(); });
  impl_->incoming.push_back(r);
  impl_->Wake();
  // The loop answers by the deadline (or after the bastion's own connect timeout, when it
  // has to open the session first); the margin covers a loop busy with other nodes.
  const auto give_up = std::max(deadline, Clock::now() + impl_->options.connect_timeout) +
                       std::chrono::seconds(5);
  // In slices, so that a caller shutting down (SshOptions::cancel: plumb watch on SIGTERM)
  // is not kept waiting for a bastion that does not answer.
  const CancelSignal* cancel = impl_->options.cancel;
  while (!r->answered && Clock::now() < give_up && !(cancel != nullptr && cancel->is_set()))
    impl_->answered.wait_until(lock, std::min(give_up, Clock::now() + std::chrono::milliseconds(200)),
                               [&r] { return r->answered; });
  if (!r->answered && cancel != nullptr && cancel->is_set()) {
    r->abandoned = true;
    return Diagnostic::Error("ssh.cancelled", fmt::format("{}: cancelled (shutting down)", node));
  }
  if (!r->answered) {
    r->abandoned = true;
    return Diagnostic::Error("ssh.timeout", fmt::format("{}: through {}: no answer in time", node, impl_->name));
  }
  return std::move(r->result);
}

std::string Bastion::JumpSpec() const {
  const SshOptions& o = impl_->options;
  return fmt::format("{}@{}:{}", o.user, o.host, o.port);
}

size_t Bastion::open_streams() const { return impl_->streams.load(); }
int Bastion::sessions_opened() const { return impl_->opened.load(); }
size_t Bastion::channels_closing() const { return impl_->closing_count.load(); }
std::string Bastion::last_drop() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->last_drop;
}

}  // namespace plumb::transport
