// CancelSignal and WaitFd: the one poll() an SSH wait makes on its socket and the cancel signal
// together. No timing is asserted: each wait ends on a condition already true (a deadline
// already past, data already written, a signal already set) or set by another thread; a broken
// wait fails after its 30 s deadline instead of hanging.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "modules/transport/cancel_signal.h"

using namespace plumb::transport;
using Clock = std::chrono::steady_clock;

namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    close(r);
    close(w);
  }
};

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

}  // namespace

TEST_CASE("cancel signal: unset until Set, then set for good and its fd readable for every poller") {
  CancelSignal c;
  CHECK_FALSE(c.is_set());
  CHECK_FALSE(c.flag().load());
  CHECK_FALSE(Readable(c.fd()));
  c.Set();
  CHECK(c.is_set());
  CHECK(c.flag().load());
  CHECK(Readable(c.fd()));
  CHECK(Readable(c.fd()));   // nobody drains it: a second wait sees it too
  c.Set();                   // a second signal changes nothing
  CHECK(c.is_set());
  CHECK(Readable(c.fd()));
}

TEST_CASE("WaitFd: data already there is kReady, with or without a cancel signal") {
  Pipe p;
  REQUIRE(write(p.w, "x", 1) == 1);
  CHECK(WaitFd(p.r, POLLIN, nullptr, Clock::now() + std::chrono::seconds(30)) == WaitResult::kReady);
  CancelSignal c;
  CHECK(WaitFd(p.r, POLLIN, &c, Clock::now() + std::chrono::seconds(30)) == WaitResult::kReady);
}

TEST_CASE("WaitFd: a set cancel signal ends the wait at once and wins over ready data") {
  Pipe p;
  CancelSignal c;
  c.Set();
  CHECK(WaitFd(p.r, POLLIN, &c, Clock::now() + std::chrono::seconds(30)) == WaitResult::kCancelled);
  REQUIRE(write(p.w, "x", 1) == 1);
  CHECK(WaitFd(p.r, POLLIN, &c, Clock::now() + std::chrono::seconds(30)) == WaitResult::kCancelled);
}

TEST_CASE("WaitFd: a deadline already past with nothing to read is kTimeout") {
  Pipe p;
  CancelSignal c;
  CHECK(WaitFd(p.r, POLLIN, &c, Clock::now() - std::chrono::seconds(1)) == WaitResult::kTimeout);
  CHECK(WaitFd(p.r, POLLIN, nullptr, Clock::now()) == WaitResult::kTimeout);
}

TEST_CASE("WaitFd: a hung-up peer counts as ready (the caller's read says EOF)") {
  Pipe p;
  close(p.w);
  p.w = open("/dev/null", O_WRONLY);   // keep the destructor's close harmless
  CHECK(WaitFd(p.r, POLLIN, nullptr, Clock::now() + std::chrono::seconds(30)) == WaitResult::kReady);
}

TEST_CASE("WaitFd: a writable pipe end is kReady for POLLOUT") {
  Pipe p;
  CancelSignal c;
  CHECK(WaitFd(p.w, POLLOUT, &c, Clock::now() + std::chrono::seconds(30)) == WaitResult::kReady);
}

TEST_CASE("WaitFd: a signal set while a wait sleeps wakes it (the Ctrl-C of plumb watch)") {
  Pipe p;
  CancelSignal c;
  // Set from another thread once the wait is (very likely) asleep; either way the result is
  // kCancelled, and a wait that missed the wake-up would end in kTimeout after 30 s.
  std::thread setter([&c] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    c.Set();
  });
  WaitResult r = WaitFd(p.r, POLLIN, &c, Clock::now() + std::chrono::seconds(30));
  setter.join();
  CHECK(r == WaitResult::kCancelled);
}
