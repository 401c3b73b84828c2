// The exit code table: each (verb, outcome) once, every row reachable through ExitCodeFor, an
// outcome a verb does not have refused loudly, and each verb's help listing its rows in code
// order.
#include <doctest/doctest.h>

#include <set>
#include <stdexcept>
#include <utility>

#include "schemas/exit_codes.h"

using namespace plumb;

TEST_CASE("exit codes: every row is one (verb, outcome), and ExitCodeFor gives its code") {
  std::set<std::pair<std::string, Outcome>> seen;
  for (const ExitCodeRow& r : ExitCodeTable()) {
    CAPTURE(std::string(r.verb));
    CAPTURE(OutcomeName(r.outcome));
    CHECK(seen.insert({std::string(r.verb), r.outcome}).second);
    CHECK(ExitCodeFor(r.verb, r.outcome) == r.code);
    CHECK_FALSE(r.meaning.empty());
  }
}

TEST_CASE("exit codes: the codes pipelines rely on") {
  CHECK(ExitCodeFor("plan", Outcome::kChanges) == 2);
  CHECK(ExitCodeFor("plan", Outcome::kInSync) == 0);
  CHECK(ExitCodeFor("drift", Outcome::kDrift) == 2);
  CHECK(ExitCodeFor("gather", Outcome::kPartial) == 3);
  CHECK(ExitCodeFor("apply", Outcome::kPaused) == 3);
  CHECK(ExitCodeFor("apply", Outcome::kInterrupted) == 130);
  // Every verb has the shared rows.
  CHECK(ExitCodeFor("runs", Outcome::kError) == 1);
  CHECK(ExitCodeFor("bmc reset", Outcome::kOk) == 0);
  // watch --once reports drift's verdict with drift's codes.
  for (Outcome o : {Outcome::kInSync, Outcome::kDrift, Outcome::kNoVerdict})
    CHECK(ExitCodeFor("watch", o) == ExitCodeFor("drift", o));
}

TEST_CASE("exit codes: an outcome a verb does not have is a programming error, not a guess") {
  CHECK_THROWS_AS(ExitCodeFor("gather", Outcome::kDrift), std::logic_error);
  CHECK_THROWS_AS(ExitCodeFor("validate", Outcome::kPaused), std::logic_error);
}

TEST_CASE("exit codes: a verb's help lists its own rows and the shared ones, by code") {
  const std::string plan = ExitCodesHelp("plan");
  CHECK(plan.rfind("Exit codes:\n", 0) == 0);
  CHECK(plan.find("    2  --detailed-exitcode: changes pending") != std::string::npos);
  CHECK(plan.find("  130  interrupted") != std::string::npos);
  CHECK(plan.find("success") == std::string::npos);   // plan's 0 is "no changes", said once
  int last = -1;
  for (const ExitCodeRow& r : ExitCodesOf("apply")) {
    CHECK(r.code >= last);
    last = r.code;
  }
  for (std::string_view verb : ExitCodeVerbs()) CHECK(verb != "*");
  const std::string md = ExitCodesMarkdown();
  CHECK(md.find("| `drift` | 2 | unwaived drift (an expired waiver counts) |") != std::string::npos);
}

TEST_CASE("exit codes: the JSON table and the one-line-per-code summary of plumb --help") {
  const std::string text = ExitCodesJsonText();
  REQUIRE(text.size() > 2);
  CHECK(text.back() == '\n');
  CHECK(text.find("{\n    \"code\": 2,\n    \"command\": \"drift\",\n    \"meaning\": \"unwaived drift "
                  "(an expired waiver counts)\",\n    \"outcome\": \"drift\"\n  }") != std::string::npos);
  const std::string summary = ExitCodesSummary();
  CHECK(summary.rfind("Exit codes (plumb exit-codes, or a command's --help, says which it uses):\n", 0) == 0);
  CHECK(summary.find("\n    0  ok, in-sync") != std::string::npos);   // each outcome named once
  CHECK(summary.find("\n  130  interrupted\n") != std::string::npos);
  size_t lines = 0;
  for (char c : summary) lines += c == '\n';
  std::set<int> codes;
  for (const ExitCodeRow& r : ExitCodeTable()) codes.insert(r.code);
  CHECK(lines == codes.size() + 1);
}
