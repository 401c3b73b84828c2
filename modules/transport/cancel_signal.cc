#include "modules/transport/cancel_signal.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace plumb::transport {

CancelSignal::CancelSignal() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

CancelSignal::~CancelSignal() { close(fd_); }

void CancelSignal::Set() noexcept {
  set_.store(true);
  const uint64_t one = 1;
  // Non-blocking, and the counter cannot overflow from a handful of signals: never blocks a
  // signal handler. errno is kept for the code the signal interrupted.
  const int saved = errno;
  ssize_t n = write(fd_, &one, sizeof one);
  (void)n;
  errno = saved;
}

WaitResult WaitFd(int fd, short events, const CancelSignal* cancel,
                  std::chrono::steady_clock::time_point deadline) {
  pollfd p[2] = {{fd, events, 0}, {cancel != nullptr ? cancel->fd() : -1, POLLIN, 0}};
  for (;;) {
    if (cancel != nullptr && cancel->is_set()) return WaitResult::kCancelled;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    // Rounded up, so a wait never ends a fraction of a millisecond before its deadline and
    // spins on a zero timeout.
    if (deadline <= std::chrono::steady_clock::now()) left = std::chrono::milliseconds(0);
    else if (left < std::chrono::milliseconds(1)) left = std::chrono::milliseconds(1);
    const int timeout = left > std::chrono::hours(24) ? 24 * 3600 * 1000 : static_cast<int>(left.count());
    p[0].revents = p[1].revents = 0;
    int r = poll(p, cancel != nullptr ? 2 : 1, timeout);
    if (r < 0) {
      if (errno == EINTR) continue;
      return WaitResult::kError;
    }
    if (cancel != nullptr && (p[1].revents != 0 || cancel->is_set())) return WaitResult::kCancelled;
    if (p[0].revents != 0) return WaitResult::kReady;
    if (r == 0 && timeout == 0) return WaitResult::kTimeout;
    // Woken with time left and nothing to report (cannot happen with poll; loop defensively).
  }
}

}  // namespace plumb::transport
