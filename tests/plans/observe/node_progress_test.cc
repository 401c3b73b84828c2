// The progress line of a read on a terminal (plans/observe/node_progress).
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "plans/observe/node_progress.h"

using namespace plumb;

TEST_CASE("progress line: rewritten per node, counts the unreadable, erased at the end") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  {
    plans::NodeProgressLine line("gather", f);
    plans::NodeObservation ok, bad;
    ok.reachable = true;
    bad.reachable = false;
    line.OnNodeDone(ok, 1, 3);
    line.OnNodeDone(bad, 2, 3);
    line.OnNodeDone(ok, 3, 3);
  }
  std::rewind(f);
  std::string text;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) text.append(buf, n);
  std::fclose(f);
  CHECK(text ==
        "\rgather: 1/3 nodes\rgather: 2/3 nodes (1 unreadable)\rgather: 3/3 nodes (1 unreadable)"
        "\r\033[K");
}
