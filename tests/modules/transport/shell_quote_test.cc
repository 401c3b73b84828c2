#include <doctest/doctest.h>

#include "modules/transport/shell.h"

using plumb::transport::ShellQuote;

TEST_CASE("ShellQuote makes one inert word of anything") {
  CHECK(ShellQuote("550.90.07") == "'550.90.07'");
  CHECK(ShellQuote("") == "''");
  CHECK(ShellQuote("it's") == "'it'\\''s'");
  CHECK(ShellQuote("$(reboot)") == "'$(reboot)'");
  CHECK(ShellQuote("a\nb") == "'a\nb'");
}
