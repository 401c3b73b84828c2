// Node patterns read one way everywhere: host lists with commas inside brackets (as plumb and
// Slurm print them), globs, both mixed, exclusions, groups.
#include <doctest/doctest.h>

#include "inventory/node_pattern.h"

using plumb::inventory::NodePattern;
using plumb::inventory::NodeTerm;
using plumb::inventory::SplitNodePattern;
using plumb::inventory::WhyNoNodeTerm;

TEST_CASE("node patterns: commas inside brackets belong to the term") {
  CHECK(SplitNodePattern("n[1-3,5], gpu*,!n2") ==
        std::vector<std::string>{"n[1-3,5]", "gpu*", "!n2"});
  CHECK(SplitNodePattern(" ,, ").empty());
}

TEST_CASE("node patterns: Slurm host lists expand, keeping zero padding") {
  NodeTerm t("n[1-3,5]");
  for (const char* n : {"n1", "n2", "n3", "n5"}) CHECK(t.Matches(n));
  for (const char* n : {"n4", "n6", "n15", "n"}) CHECK_FALSE(t.Matches(n));
  NodeTerm padded("gpu[001-003,010]");
  CHECK(padded.Matches("gpu002"));
  CHECK(padded.Matches("gpu010"));
  CHECK_FALSE(padded.Matches("gpu2"));
  CHECK(NodeTerm("n[12]").Matches("n12"));            // a host list of one, as Slurm reads it
  CHECK(NodeTerm("gpu[8-11]").Matches("gpu10"));      // ranges past one digit (fnmatch could not)
}

TEST_CASE("node patterns: globs, and ranges mixed with globs") {
  CHECK(NodeTerm("gpu*").Matches("gpu001"));
  CHECK(NodeTerm("n?").Matches("n7"));
  CHECK(NodeTerm("gpu[a-c]1").Matches("gpub1"));     // a character class stays a glob
  CHECK_FALSE(NodeTerm("gpu[!a]1").Matches("gpua1"));
  NodeTerm mixed("r[1-2]-n*");
  CHECK(mixed.Matches("r2-n17"));
  CHECK_FALSE(mixed.Matches("r3-n1"));
  CHECK_FALSE(NodeTerm("n[1-99999999]").Matches("n5"));   // too big: matches nothing, no blow-up
  CHECK_FALSE(NodeTerm("n[3-1]").Matches("n2"));          // backwards: nothing
}

TEST_CASE("node patterns: the expansion limit is shared by a term's brackets") {
  // A million names at most: each bracket gets the million divided by what came before.
  CHECK(NodeTerm("r[1-1000]n[1-2]").Matches("r1000n2"));
  CHECK_FALSE(NodeTerm("r[1-1000]n[1-1001]").Matches("r1n1"));   // 1,001,000: matches nothing
  CHECK(NodeTerm("n[1-3,a]").Matches("na"));                     // not a range list: a glob class
}

TEST_CASE("node patterns: exclusions apply after the positive terms; groups through a test") {
  NodePattern p("n[1-5],!n[2,4]");
  CHECK(p.Matches("n1"));
  CHECK_FALSE(p.Matches("n2"));
  CHECK(p.Matches("n3"));
  CHECK_FALSE(p.Matches("n4"));
  CHECK_FALSE(p.Matches("n6"));
  NodePattern only_ex("!n1");
  CHECK(only_ex.Matches("n2"));
  CHECK_FALSE(only_ex.Matches("n1"));
  NodePattern g("@h100,!n3");
  auto in = [](std::string_view node, std::string_view group) {
    return group == "h100" && (node == "n1" || node == "n3");
  };
  CHECK(g.Matches("n1", in));
  CHECK_FALSE(g.Matches("n3", in));
  CHECK_FALSE(g.Matches("n2", in));
  CHECK_FALSE(g.Matches("n1"));   // no group test: a group term matches nothing
}

TEST_CASE("node patterns: one that names no node says why") {
  CHECK(WhyNoNodeTerm("") == "it is empty");
  CHECK(WhyNoNodeTerm(" ") == "it is empty");
  CHECK(WhyNoNodeTerm("\t\n") == "it is empty");
  CHECK(WhyNoNodeTerm(",") == "it holds only commas and blanks");
  CHECK(WhyNoNodeTerm(" , ,, ") == "it holds only commas and blanks");
  CHECK(WhyNoNodeTerm("!") == "its '!' names nothing to exclude");
  CHECK(WhyNoNodeTerm("!, ! ,") == "its '!' names nothing to exclude");
  // Any term that names nodes will do, an exclusion or a group included.
  for (const char* ok : {"n1", " n1 ", "n[1-3,5]", "gpu*", "@h100", "!n3", "n1,!", ",n1,", "! n3"}) {
    CAPTURE(ok);
    CHECK(WhyNoNodeTerm(ok).empty());
  }
}
