// Terminal colour (plans/report/colour): when it is on, and what a coloured report looks like.
#include <doctest/doctest.h>

#include <string>

#include "plans/report/colour.h"

using namespace plumb::plans::report;

TEST_CASE("colour: always and never win; auto needs a drawing terminal and no NO_COLOR") {
  CHECK(ColourWanted("always", "1", false));
  CHECK_FALSE(ColourWanted("never", nullptr, true));
  CHECK(ColourWanted("auto", nullptr, true));
  CHECK(ColourWanted("auto", "", true));          // NO_COLOR set but empty: not asked
  CHECK_FALSE(ColourWanted("auto", "1", true));
  CHECK_FALSE(ColourWanted("auto", nullptr, false));
}

TEST_CASE("colour: a terminal draws unless TERM is dumb") {
  CHECK(TerminalDraws(true, nullptr));
  CHECK(TerminalDraws(true, "xterm-256color"));
  CHECK_FALSE(TerminalDraws(true, "dumb"));
  CHECK_FALSE(TerminalDraws(false, "xterm"));
}

TEST_CASE("colour: a report's change markers colour their line; verdict words stand out") {
  const std::string text =
      "gpu001\n  + /sysctl/a  1\n  ~ /sysctl/b  1 -> 2\n  - /sysctl/c\nPlan: 1 to change\n"
      "gpu002 FAILED; unfailed stays\nnode IN SYNC";
  CHECK(ColorizeReport(text, false) == text);
  CHECK(ColorizeReport(text, true) ==
        "gpu001\n"
        "\033[32m  + /sysctl/a  1\033[0m\n"
        "\033[33m  ~ /sysctl/b  1 -> 2\033[0m\n"
        "\033[31m  - /sysctl/c\033[0m\n"
        "\033[1mPlan: 1 to change\033[0m\n"
        "gpu002 \033[31mFAILED\033[0m; unfailed stays\n"
        "node \033[32mIN SYNC\033[0m");
  // A marker not followed by a space is no change line; "error:" matches before a word char.
  CHECK(ColorizeReport("-x\nerror:y\n", true) == "-x\n\033[31merror:\033[0my\n");
  CHECK(plumb::plans::report::ReportStyle(true)("-x\nerror:y\n") == ColorizeReport("-x\nerror:y\n", true));
  CHECK(plumb::plans::report::ReportStyle(false)("-x\nerror:y\n") == "-x\nerror:y\n");
}

TEST_CASE("colour: a live table's status words") {
  CHECK(ColorizeStatus("done", true) == "\033[32mdone\033[0m");
  CHECK(ColorizeStatus("timeout", true) == "\033[31mtimeout\033[0m");
  CHECK(ColorizeStatus("skipped", true) == "\033[33mskipped\033[0m");
  CHECK(ColorizeStatus("draining", true) == "draining");
  CHECK(ColorizeStatus("failed", false) == "failed");
}
