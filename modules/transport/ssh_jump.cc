#include "modules/transport/ssh_jump.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

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

namespace plumb::transport {
namespace {

using Clock = std::chrono::steady_clock;

// How often the loop looks at channels still opening (libssh answers SSH_AGAIN until the
// bastion replies), and how long it sleeps with nothing to do but carry bytes.
constexpr int kOpeningPollMs = 5;
constexpr int kIdlePollMs = 1000;

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

// A carried connection: the channel to the node, our end of the socketpair, and the two
// connectors that copy bytes each way inside the loop's ssh_event.
struct Tunnel {
  std::string node;
  ssh_channel channel = nullptr;
  int fd = -1;
  ssh_connector to_fd = nullptr;
  ssh_connector to_channel = nullptr;
};

int DrainWake(socket_t fd, int /*revents*/, void* /*userdata*/) {
  uint64_t v;
  while (read(fd, &v, sizeof v) > 0) {
  }
  return 0;
}

bool PeerHungUp(int fd) {
  pollfd p{fd, 0, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

}  // namespace

struct Bastion::Impl {
  SshOptions options;
  std::string name;   ///< "bastion jump@host:port", for messages

  std::mutex mu;
  std::condition_variable answered;
  std::deque<std::shared_ptr<Request>> incoming;   ///< under mu
  bool stop = false;                               ///< under mu
  std::thread loop;                                ///< started by the first OpenStream
  int wake = -1;                                   ///< eventfd: a request, or stop
  std::atomic<size_t> streams{0};
  std::atomic<int> opened{0};

  // The loop thread's own.
  std::unique_ptr<SshShell> shell;
  ssh_event event = nullptr;
  std::vector<std::shared_ptr<Request>> opening;
  std::list<Tunnel> tunnels;

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
    event = ssh_event_new();
    ssh_event_add_session(event, s);
    ssh_event_add_fd(event, wake, POLLIN, DrainWake, nullptr);
    ++opened;
    return OkStatus();
  }

  void CloseTunnel(Tunnel& t) {
    if (event != nullptr) {
      ssh_event_remove_connector(event, t.to_fd);
      ssh_event_remove_connector(event, t.to_channel);
      // Removing a channel's connector takes its whole session out of the event (libssh
      // 0.10's ssh_connector_remove_event): put it back, or the loop would stop reading the
      // bastion's socket for every other node. (Adding a session already there is a no-op.)
      if (shell != nullptr && shell->native_session() != nullptr)
        ssh_event_add_session(event, shell->native_session());
    }
    ssh_connector_free(t.to_fd);
    ssh_connector_free(t.to_channel);
    if (!ssh_channel_is_closed(t.channel)) ssh_channel_close(t.channel);
    ssh_channel_free(t.channel);
    close(t.fd);   // the node's session reads EOF
    --streams;
  }

  // The session broke (or we stop): every stream it carried ends, every open fails.
  void Drop(const Diagnostic& why) {
    for (Tunnel& t : tunnels) CloseTunnel(t);
    tunnels.clear();
    for (auto& r : opening) {
      if (r->channel != nullptr) ssh_channel_free(r->channel);
      Answer(r, Failed(*r, why));
    }
    opening.clear();
    if (event != nullptr) {
      ssh_event_remove_fd(event, wake);
      if (shell != nullptr && shell->native_session() != nullptr)
        ssh_event_remove_session(event, shell->native_session());
      ssh_event_free(event);
      event = nullptr;
    }
    if (shell != nullptr) shell->Disconnect();
  }

  // Joins an opened channel to a fresh socketpair; the caller gets the other end.
  Result<int> Join(const std::shared_ptr<Request>& r) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      return Failed(*r, Diagnostic::Error("ssh.io", fmt::format("socketpair: {}", std::strerror(errno))));
    ssh_session s = shell->native_session();
    Tunnel t;
    t.node = r->node;
    t.channel = r->channel;
    t.fd = sv[0];
    t.to_fd = ssh_connector_new(s);
    t.to_channel = ssh_connector_new(s);
    ssh_connector_set_in_channel(t.to_fd, t.channel, SSH_CONNECTOR_STDOUT);
    ssh_connector_set_out_fd(t.to_fd, t.fd);
    ssh_connector_set_in_fd(t.to_channel, t.fd);
    ssh_connector_set_out_channel(t.to_channel, t.channel, SSH_CONNECTOR_STDOUT);
    ssh_event_add_connector(event, t.to_fd);
    ssh_event_add_connector(event, t.to_channel);
    r->channel = nullptr;
    tunnels.push_back(t);
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
      if (rc == SSH_OK) {
        Answer(r, Join(r));
        continue;
      }
      if (rc == SSH_AGAIN && Clock::now() < r->deadline) {
        still.push_back(r);
        continue;
      }
      std::string why = rc == SSH_AGAIN ? "" : ssh_get_error(s);
      if (r->channel != nullptr) ssh_channel_free(r->channel);
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

  // Streams whose node or whose caller went away.
  void Reap() {
    for (auto it = tunnels.begin(); it != tunnels.end();) {
      const bool gone = ssh_channel_is_closed(it->channel) || ssh_channel_is_eof(it->channel) ||
                        PeerHungUp(it->fd);
      if (!gone) {
        ++it;
        continue;
      }
      CloseTunnel(*it);
      it = tunnels.erase(it);
    }
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
      ssh_event_dopoll(event, opening.empty() ? kIdlePollMs : kOpeningPollMs);
      Reap();
      if (!SessionUp()) Drop(Diagnostic::Error("ssh.io", "the bastion session broke", {}, {},
                                               "the bastion rebooted or dropped the connection; "
                                               "the next read opens it again"));
    }
    Drop(Diagnostic::Error("ssh.cancelled", "shutting down"));
  }
};

Bastion::Bastion(SshOptions options) : impl_(new Impl) {
  impl_->options = std::move(options);
  impl_->options.via = nullptr;   // no bastion behind a bastion (yet)
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

size_t Bastion::open_streams() const { return impl_->streams.load(); }
int Bastion::sessions_opened() const { return impl_->opened.load(); }

}  // namespace plumb::transport
