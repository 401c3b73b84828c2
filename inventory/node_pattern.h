#pragma once
/// Node patterns: how a user names a set of nodes, read the same way everywhere a pattern is
/// taken (--limit of every verb, waivers' `nodes`, `bmc --limit`). A pattern is a comma list of
/// terms; a comma inside brackets belongs to its term, so the host lists plumb and Slurm print
/// ("n[1-3,5]") can be pasted back:
///   n[1-3,5], gpu[001-016]   Slurm host-list ranges (brackets holding numbers, commas, dashes)
///   gpu*, n?, gpu[a-c]1      globs (fnmatch: * ? [a-z] [!x])
///   r[1-2]-n*                both: the ranges expand, each result is a glob
///   @h100                    a group (the caller says who is in it)
///   !term                    exclusion, applied after the positive terms (alone: all but)
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace plumb::inventory {

/// The terms of `pattern`, split at commas outside brackets, trimmed, empty ones dropped.
std::vector<std::string> SplitNodePattern(std::string_view pattern);

/// Why `pattern` names no node ("it is empty", "it holds only commas and blanks", "its '!'
/// names nothing to exclude"), or "" when it has a term that names nodes. A pattern that was
/// given must name some: "" must not read as "every node" when a script's `--limit "$NODES"`
/// ran with an empty variable (only a pattern left out means every node).
std::string WhyNoNodeTerm(std::string_view pattern);

/// One term without its `!`/`@`: matches node names. Built once, matched many times (a drift
/// report asks for every node x waiver).
class NodeTerm {
 public:
  explicit NodeTerm(std::string_view term);
  bool Matches(std::string_view name) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::unordered_set<std::string> names_;   // expansions without glob characters
  std::vector<std::string> globs_;          // expansions with them
};

/// A whole pattern.
class NodePattern {
 public:
  struct Term {
    std::string text;     ///< as written, without `!`
    bool exclude = false;
    bool group = false;   ///< `@name`: `text` is "@name", `term` unused
    NodeTerm term;
  };
  explicit NodePattern(std::string_view pattern);
  /// Asked for `@group` terms: is `node` in `group`? Without one, group terms match nothing.
  using GroupTest = std::function<bool(std::string_view node, std::string_view group)>;
  bool Matches(std::string_view name, const GroupTest& in_group = {}) const;
  /// Does this one term (ignoring its `!`) match `name`?
  static bool TermMatches(const Term& t, std::string_view name, const GroupTest& in_group);
  const std::vector<Term>& terms() const { return terms_; }
  bool empty() const { return terms_.empty(); }

 private:
  std::vector<Term> terms_;
};

}  // namespace plumb::inventory
