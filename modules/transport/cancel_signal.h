#pragma once
/// CancelSignal: "stop now" that a poll() can wait on. A long-lived caller (plumb watch) sets it
/// from its SIGINT/SIGTERM handler; every SSH wait in progress polls its socket and this
/// signal's fd together, so it ends at once instead of waking up every few hundred ms to look at
/// a flag (those wake-ups were most of a steady watch read's client CPU on slow nodes).
///
/// Set once, never cleared. The fd is an eventfd nobody reads: once set it stays readable, so
/// any number of waits, now and later, see it.
#include <poll.h>

#include <atomic>
#include <chrono>

namespace plumb::transport {

class CancelSignal {
 public:
  /// Throws std::system_error when no eventfd can be made (out of file descriptors).
  CancelSignal();
  ~CancelSignal();
  CancelSignal(const CancelSignal&) = delete;
  CancelSignal& operator=(const CancelSignal&) = delete;

  /// Async-signal-safe (an atomic store and one write(2)): a signal handler may call it.
  void Set() noexcept;
  bool is_set() const noexcept { return set_.load(); }
  /// The flag alone, for loops that only look between waits (the watch loop).
  const std::atomic<bool>& flag() const noexcept { return set_; }
  /// Readable (POLLIN) once set.
  int fd() const noexcept { return fd_; }

 private:
  std::atomic<bool> set_{false};
  int fd_ = -1;
};

enum class WaitResult { kReady, kCancelled, kTimeout, kError };

/// The error code of anything that stopped because the cancel signal came (a BMC wait, a
/// request): callers tell "stopped on request" from "failed" by it.
inline constexpr const char* kCancelledCode = "cancelled";

/// Waits until `fd` has `events` (POLLIN, POLLOUT; an error or hang-up on it counts as ready:
/// the caller's next read or write tells which), `cancel` (may be null) is set, or `deadline`
/// passes, in one poll() per wake-up (EINTR restarts it with what is left). Cancellation wins
/// over readiness, readiness over the deadline. kError: poll() itself failed (errno says why).
WaitResult WaitFd(int fd, short events, const CancelSignal* cancel,
                  std::chrono::steady_clock::time_point deadline);

}  // namespace plumb::transport
