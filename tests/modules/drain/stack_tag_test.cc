// The stack tag's pure helpers (modules/drain/stack_tag.h): what plumb writes as Slurm features
// or Kubernetes labels, what it reads back, and which stacks a job's constraint asks for.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "modules/drain/stack_tag.h"

using namespace plumb::modules;
using Strings = std::vector<std::string>;

TEST_CASE("stack tag: TagOf cuts the commit to 12 hex digits; TagText for reports") {
  const StackTag t = TagOf("h100-2025q4", "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b");
  CHECK(t.stack == "h100-2025q4");
  CHECK(t.commit == "1a2b3c4d5e6f");
  CHECK(TagOf("s", "abc").commit == "abc");   // a short one stays as it is
  CHECK(TagText(t) == "h100-2025q4@1a2b3c4d5e6f");
  CHECK(TagText({}) == "(none)");
  CHECK(TagText({"s", ""}) == "s");
  CHECK(TagText({"", "abc"}) == "?@abc");
  CHECK(StackTag{}.empty());
  CHECK_FALSE(StackTag{"", "abc"}.empty());
}

TEST_CASE("stack tag: TagProblem refuses what a scheduler cannot carry") {
  CHECK(TagProblem({"h100-2025q4", "1a2b3c4d5e6f"}).empty());
  CHECK(TagProblem({}).empty());
  CHECK(TagProblem({"A_b.c-9", ""}).empty());
  CHECK(TagProblem({std::string(63, 'a'), ""}).empty());
  // A valid file name, not a valid label value (nor a safe feature).
  CHECK(TagProblem({"a.", ""}).find("begin and end") != std::string::npos);
  CHECK(TagProblem({std::string(64, 'a'), ""}).find("over 63") != std::string::npos);
  CHECK_FALSE(TagProblem({"a,b", ""}).empty());   // would write two features
  CHECK_FALSE(TagProblem({"a&b", ""}).empty());
  CHECK(TagProblem({"ok", "12 45"}).find("commit") != std::string::npos);
  // stack_commit_<x> is the commit's feature: a stack named commit_x would read back as one.
  CHECK(TagProblem({"commit_x", ""}).find("begins with 'commit_'") != std::string::npos);
  CHECK(TagProblem({"commitx", ""}).empty());
}

TEST_CASE("stack tag: Slurm features replace plumb's, everyone else's kept in order") {
  const StackTag t{"new", "abcdef123456"};
  CHECK(StackFeatures(t) == Strings{"stack_new", "stack_commit_abcdef123456"});
  CHECK(StackFeatures({}).empty());
  CHECK(StackFeatures({"", "abc"}) == Strings{"stack_commit_abc"});
  const Strings current{"gpu", "stack_old", "ib", "stack_commit_0123456789ab", "", "nvme"};
  CHECK(WithStackFeatures(current, t) ==
        Strings{"gpu", "ib", "nvme", "stack_new", "stack_commit_abcdef123456"});
  CHECK(WithStackFeatures(current, {}) == Strings{"gpu", "ib", "nvme"});
  CHECK(WithStackFeatures({}, t) == Strings{"stack_new", "stack_commit_abcdef123456"});
  CHECK(WithStackFeatures({}, {}).empty());
}

TEST_CASE("stack tag: read back from a node's features, the first of each kind") {
  CHECK(TagFromFeatures({"gpu", "stack_commit_abc", "stack_a", "stack_b", "stack_commit_def"}) ==
        StackTag{"a", "abc"});
  CHECK(TagFromFeatures({"gpu", "ib"}).empty());
  CHECK(TagFromFeatures({}).empty());
  CHECK(TagFromFeatures({"stack_commit_abc"}) == StackTag{"", "abc"});
  // Written and read back.
  const StackTag t{"h100-2025q4", "1a2b3c4d5e6f"};
  CHECK(TagFromFeatures(WithStackFeatures({"gpu", "stack_x"}, t)) == t);
}

TEST_CASE("stack tag: the stacks a Slurm constraint names") {
  CHECK(StacksInConstraint("stack_a&gpu") == Strings{"a"});
  CHECK(StacksInConstraint("[stack_a*2&stack_b]") == Strings{"a", "b"});
  CHECK(StacksInConstraint("stack_commit_abc|stack_c") == Strings{"c"});   // a commit is no stack
  CHECK(StacksInConstraint("gpu:2").empty());
  CHECK(StacksInConstraint("").empty());
  CHECK(StacksInConstraint("stack_a|stack_a,(stack_b)") == Strings{"a", "b"});
  CHECK(StacksInConstraint("stack_").empty());
  CHECK(StacksInConstraint("mystack_a").empty());
}
