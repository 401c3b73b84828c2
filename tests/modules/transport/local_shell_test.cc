// LocalShell: exit status, both streams, environment, and the timeout killing the whole group.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>

#include "modules/transport/local_shell.h"

using namespace plumb::transport;

TEST_CASE("local shell: runs /bin/sh -c with output, exit status and added environment") {
  LocalShell sh(std::map<std::string, std::string>{{"PLUMB_T", "it's"}});
  auto r = sh.Run("echo out; echo err >&2; printf %s \"$PLUMB_T\"; exit 3", std::chrono::seconds(10));
  REQUIRE(r.ok());
  CHECK(r->exit_status == 3);
  CHECK(r->out == "out\nit's");
  CHECK(r->err == "err\n");
}

TEST_CASE("local shell: a command past its timeout is killed with its children") {
  LocalShell sh;
  auto t0 = std::chrono::steady_clock::now();
  auto r = sh.Run("sleep 30 & sleep 30", std::chrono::milliseconds(300));
  auto took = std::chrono::steady_clock::now() - t0;
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "local.timeout");
  CHECK(took < std::chrono::seconds(10));
}

TEST_CASE("local shell: plumb's SSH key passphrase is not passed to the commands it runs") {
  ::setenv("PLUMB_SSH_PASSPHRASE", "s3cret-PLANTED", 1);
  ::setenv("PLUMB_T_KEEP", "kept", 1);
  LocalShell sh;
  auto r = sh.Run("printf '%s|%s' \"${PLUMB_SSH_PASSPHRASE-unset}\" \"$PLUMB_T_KEEP\"",
                  std::chrono::seconds(10));
  ::unsetenv("PLUMB_SSH_PASSPHRASE");
  ::unsetenv("PLUMB_T_KEEP");
  REQUIRE(r.ok());
  CHECK(r->out == "unset|kept");
}
