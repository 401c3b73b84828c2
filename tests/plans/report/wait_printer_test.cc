// What `plumb bmc` prints while it waits on a BMC (plans/report/wait_printer.h): a redrawn line
// on a TTY; in a log a line per state change and a heartbeat in between, never more.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "plans/report/wait_printer.h"

using plumb::plans::report::WaitPrinter;
using plumb::transport::WaitProgress;
using namespace std::chrono_literals;

namespace {

WaitProgress WaitTask(std::string state, int percent) {
  WaitProgress p;
  p.node = "gpu001";
  p.what = "task /redfish/v1/TaskService/Tasks/7";
  p.state = std::move(state);
  p.percent = percent;
  p.waited = 90s;
  p.limit = 45min;
  return p;
}

// Everything written to `f` so far.
std::string WrittenTo(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string out;
  for (int c; (c = std::fgetc(f)) != EOF;) out += static_cast<char>(c);
  return out;
}

}  // namespace

TEST_CASE("wait_printer: in a log, a line per change and a heartbeat once `beat` has passed") {
  WaitPrinter w(stderr, false, 30s);
  const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
  auto first = w.Line(WaitTask("Running", 10), t0);
  REQUIRE(first);
  CHECK(*first == "gpu001: waiting for " + WaitTask("Running", 10).Text());
  CHECK_FALSE(w.Line(WaitTask("Running", 20), t0 + 10s));   // same state, beat not due
  CHECK(w.Line(WaitTask("Completed", 100), t0 + 11s));      // a change prints at once
  CHECK_FALSE(w.Line(WaitTask("Completed", 100), t0 + 40s));
  CHECK(w.Line(WaitTask("Completed", 100), t0 + 41s));      // 30 s since the last line
}

TEST_CASE("wait_printer: on a TTY every look is drawn; a wait with no node has no prefix") {
  WaitPrinter w(stderr, true, 30s);
  const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
  CHECK(w.Line(WaitTask("Running", 10), t0));
  CHECK(w.Line(WaitTask("Running", 10), t0));
  WaitProgress anon = WaitTask("Running", 10);
  anon.node.clear();
  CHECK(*w.Line(anon, t0) == "waiting for " + anon.Text());
}

TEST_CASE("wait_printer: Show redraws one line on a TTY and Done ends it once") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  WaitPrinter w(f, true, 30s);
  w.Show(WaitTask("Running", 10));
  w.Done();
  w.Done();   // nothing open: nothing written
  CHECK(WrittenTo(f) == "\rgpu001: waiting for " + WaitTask("Running", 10).Text() + "\033[K\n");
  std::fclose(f);
}

TEST_CASE("wait_printer: Show in a log writes plumb: lines and Done writes nothing") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  WaitPrinter w(f, false, 30s);
  w.Show(WaitTask("Running", 10));
  w.Show(WaitTask("Running", 11));   // heartbeat not due
  w.Done();
  CHECK(WrittenTo(f) == "plumb: gpu001: waiting for " + WaitTask("Running", 10).Text() + "\n");
  std::fclose(f);
}
