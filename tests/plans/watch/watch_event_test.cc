// Events as JSON lines: fixed field order, nulls that mean "absent on the node", write errors.
#include <doctest/doctest.h>

#include <cstdio>

#include "plans/watch/watch_event.h"

using namespace plumb;
using plans::watch::EventKind;
using plans::watch::WatchEvent;

TEST_CASE("watch event: one JSON object a line, fields in a fixed order, empty ones left out") {
  WatchEvent e;
  e.kind = EventKind::kDrift;
  e.time = "2027-01-01T00:00:00.000Z";
  e.cluster = "t";
  e.node = "n2";
  e.key = "sysctl.vm.swappiness";
  e.live = "7";
  e.desired = 60;
  e.commit = std::string(40, 'c');
  e.reason = "repair";
  e.origin = "stacks/base.yaml:2:20";
  CHECK(e.ToJson().dump() ==
        R"({"time":"2027-01-01T00:00:00.000Z","event":"drift","cluster":"t","node":"n2",)"
        R"("key":"sysctl.vm.swappiness","live":"7","desired":60,"commit":")" +
            std::string(40, 'c') + R"(","reason":"repair","origin":"stacks/base.yaml:2:20"})");
  WatchEvent absent = e;
  absent.live = nullptr;   // the key does not exist on the node: said, not dropped
  CHECK(absent.ToJson().contains("live"));
  WatchEvent reboot;
  reboot.kind = EventKind::kNodeRebooted;
  reboot.time = e.time;
  reboot.node = "n5";
  reboot.previous = "b1";
  reboot.boot_id = "b2";
  CHECK(reboot.ToJson().dump() ==
        R"({"time":"2027-01-01T00:00:00.000Z","event":"node_rebooted","node":"n5","previous":"b1","boot_id":"b2"})");
}

TEST_CASE("watch event sink: each event is a flushed line; a failed write is an error") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  plans::watch::JsonLinesSink sink(f, "tmp");
  WatchEvent e;
  e.kind = EventKind::kNodeReadable;
  e.time = "2027-01-01T00:00:00.000Z";
  e.node = "n1";
  e.key = "bad\xff utf8";   // a garbled tool's bytes never throw mid-watch
  REQUIRE(sink.Emit(e).ok());
  REQUIRE(sink.Emit(e).ok());
  std::rewind(f);
  char buf[512];
  int lines = 0;
  while (std::fgets(buf, sizeof buf, f) != nullptr) {
    ++lines;
    CHECK(nlohmann::json::parse(buf)["event"] == "node_readable");
  }
  CHECK(lines == 2);
  std::fclose(f);

  std::FILE* full = std::fopen("/dev/full", "w");
  REQUIRE(full != nullptr);
  plans::watch::JsonLinesSink broken(full, "/dev/full");
  Status st = broken.Emit(e);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == "watch.events");
  CHECK(st.error().message.find("/dev/full") != std::string::npos);
  std::fclose(full);
}
