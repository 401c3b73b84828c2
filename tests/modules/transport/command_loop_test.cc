// The command loop (command_loop.h): replies split at their marker, and the loop script itself
// under /bin/sh, fed requests as SshShell::RunRepeated sends them.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include <stdlib.h>
#include <unistd.h>

#include "modules/transport/command_loop.h"
#include "modules/transport/local_shell.h"
#include "modules/transport/shell.h"

namespace {

using plumb::transport::CommandLoopRequest;
using plumb::transport::CommandLoopScript;
using plumb::transport::NewLoopMarker;
using plumb::transport::TakeLoopReply;

// Runs the loop script under /bin/sh with `requests` on its stdin through a pipe; `env` before it.
plumb::Result<plumb::transport::CommandOutput> RunLoop(const std::string& requests, const std::string& env = "") {
  char path[] = "/tmp/plumb-loop-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, requests.data(), requests.size()) == static_cast<ssize_t>(requests.size()));
  close(fd);
  plumb::transport::LocalShell sh;
  auto ran = sh.Run(std::string("cat ") + path + " | " + env + " /bin/sh -c " +
                        plumb::transport::ShellQuote(CommandLoopScript()),
                    std::chrono::seconds(60));
  std::remove(path);
  return ran;
}

TEST_CASE("command loop: a reply is taken whole at its marker's line, never before") {
  std::string stream = "line one\nline two";
  CHECK_FALSE(TakeLoopReply(stream, "plumb-end-aa"));
  stream += "\nplumb-end-aa 1";   // the status line is still arriving
  CHECK_FALSE(TakeLoopReply(stream, "plumb-end-aa"));
  stream += "7\nnext";
  auto r = TakeLoopReply(stream, "plumb-end-aa");
  REQUIRE(r);
  CHECK(r->out == "line one\nline two");
  CHECK(r->exit_status == 17);
  CHECK(stream == "next");   // what follows stays for the next reply

  // Output that names another marker (or this one without its status) does not end the reply.
  stream = "plumb-end-bb 0\n\nplumb-end-aa x\n";
  CHECK_FALSE(TakeLoopReply(stream, "plumb-end-aa"));
  CHECK_FALSE(TakeLoopReply(stream, "plumb-end-cc"));

  CHECK(NewLoopMarker().size() == 10 + 32);
  CHECK(NewLoopMarker() != NewLoopMarker());
  CHECK(CommandLoopRequest("echo hi", "m", 0) == "7 m 1\necho hi");
}

TEST_CASE("command loop: /bin/sh runs each request as sh -c, stdin apart, status and bytes kept") {
  // Four requests in one stream, as a channel kept open would carry them: output with and
  // without trailing newlines, quotes and a newline in the command, a non-zero exit, and a
  // command that reads stdin (it must get /dev/null, not the next request).
  const std::vector<std::string> commands = {"printf 'a\\n\\n'", "printf \"it's\"; echo '\n' >/dev/null; exit 3",
                                             "cat; echo read-nothing", "echo last"};
  std::vector<std::string> markers;
  std::string requests;
  for (const auto& c : commands) {
    markers.push_back(NewLoopMarker());
    requests += CommandLoopRequest(c, markers.back(), 10);
  }
  // Through a pipe, as a channel's stdin is (a shell seeks back on a regular file, which would
  // hide a read past the request).
  auto ran = RunLoop(requests);
  REQUIRE(ran.ok());
  CHECK(ran->exit_status == 0);
  std::string stream = ran->out;
  const std::vector<std::pair<std::string, int>> want = {{"a\n\n", 0}, {"it's", 3}, {"read-nothing\n", 0}, {"last\n", 0}};
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    auto r = TakeLoopReply(stream, markers[i]);
    REQUIRE(r);
    CHECK(r->out == want[i].first);
    CHECK(r->exit_status == want[i].second);
  }
  CHECK(stream.empty());
}

TEST_CASE("command loop: a malformed request or a missing head ends the loop, never runs a thing") {
  const std::string m = NewLoopMarker();
  const std::string ok = CommandLoopRequest("echo first", m, 10);
  for (const std::string& bad : {std::string("x ") + m + " 10\necho hi",      // length not a number
                                 std::string("7 ") + m + " 1;id\necho hi",      // timeout not a number
                                 std::string("7 not-a-marker 10\necho hi")}) {  // no marker
    CAPTURE(bad);
    auto ran = RunLoop(ok + bad + CommandLoopRequest("touch /tmp/plumb-loop-ran-on", NewLoopMarker(), 10));
    REQUIRE(ran.ok());
    CHECK(ran->exit_status == 2);
    std::string stream = ran->out;
    auto first = TakeLoopReply(stream, m);
    REQUIRE(first);
    CHECK(first->out == "first\n");
    CHECK(stream.empty());   // nothing ran after the bad request
  }
  CHECK(access("/tmp/plumb-loop-ran-on", F_OK) != 0);
  // The stream ends inside a command (fewer bytes than announced): nothing is run.
  auto cut = RunLoop(ok + std::string("99 ") + m + " 10\necho hi");
  REQUIRE(cut.ok());
  CHECK(cut->exit_status == 2);
  std::string rest = cut->out;
  REQUIRE(TakeLoopReply(rest, m));
  CHECK(rest.empty());
  // No head on the node (PATH without it): the loop ends at the first request.
  auto ran = RunLoop(ok, "PATH=/nonexistent");
  REQUIRE(ran.ok());
  CHECK(ran->exit_status == 2);
  CHECK(ran->out.empty());
}

}  // namespace
