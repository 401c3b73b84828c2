#pragma once
/// The stack a node runs, as plumb shows it to the scheduler so a job can ask for one
/// (`sbatch --constraint=stack_h100-2025q4`, a nodeSelector on plumb.dev/stack).
///   Slurm:      features `stack_<stack>` and `stack_commit_<first 12 hex of the commit>`
///   Kubernetes: labels `plumb.dev/stack=<stack>` and `plumb.dev/commit=<first 12 hex>`
/// plumb owns exactly these (every feature starting with `stack_`, the two labels) and keeps
/// everyone else's. While an apply changes a node it shows no stack at all; after verify it
/// shows the commit's. (A run of some modules only, `plumb bmc apply`, leaves tags as they are:
/// it does not move the node to another stack.) Pure functions, unit-tested in tests/modules/drain/stack_tag_test.cc.
#include <string>
#include <string_view>
#include <vector>

namespace plumb::modules {

inline constexpr std::string_view kStackFeaturePrefix = "stack_";
inline constexpr std::string_view kStackCommitFeaturePrefix = "stack_commit_";
inline constexpr const char* kKubeStackLabel = "plumb.dev/stack";
inline constexpr const char* kKubeCommitLabel = "plumb.dev/commit";
/// How much of the commit a tag carries (git's abbreviation, long enough to stay unique).
inline constexpr size_t kStackCommitLength = 12;

struct StackTag {
  std::string stack;    ///< the stack file's name; "" = none shown
  std::string commit;   ///< the commit's first kStackCommitLength hex digits; "" = none shown
  bool empty() const { return stack.empty() && commit.empty(); }
  bool operator==(const StackTag&) const = default;
};

/// The tag of `stack` at `commit` (the commit cut to kStackCommitLength).
StackTag TagOf(std::string stack, std::string_view commit);
/// "h100-2025q4@1a2b3c4d5e6f", "(none)" for an empty tag: for reports.
std::string TagText(const StackTag& tag);
/// Can every scheduler carry it? Slurm features stop at , & | ( ) [ ] * : ! and spaces;
/// Kubernetes label values are at most 63 characters of [A-Za-z0-9._-], beginning and ending
/// alphanumeric; and a stack named commit_<x> would read back as a commit feature. Stack names
/// pass the inventory's schema already; this catches the rest
/// ("a." or a name of 63 characters is a valid file, not a valid label). "" when it can; else why.
std::string TagProblem(const StackTag& tag);

/// Slurm: plumb's features for `tag` ({} for an empty tag).
std::vector<std::string> StackFeatures(const StackTag& tag);
/// Slurm: the tag among a node's features (those starting with `stack_`); the first of each
/// kind wins.
StackTag TagFromFeatures(const std::vector<std::string>& features);
/// Slurm: `current` with plumb's features replaced by `tag`'s, everyone else's kept in order.
std::vector<std::string> WithStackFeatures(const std::vector<std::string>& current,
                                           const StackTag& tag);
/// Slurm: the stacks a job's constraint expression names ("stack_a&gpu|[stack_b*2]" ->
/// {"a", "b"}); commit features are not stacks.
std::vector<std::string> StacksInConstraint(std::string_view constraint);

/// A job that asks for a stack: for `plumb plan`'s "jobs that would never run".
struct StackRequest {
  std::string id, user, name;
  std::string state;    ///< the scheduler's word: "PENDING", "RUNNING", "Pending"...
  std::string stack;    ///< the stack it asks for
};

}  // namespace plumb::modules
