#include "plans/observe/facts_merge.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "plans/plan/shard.h"

namespace plumb::plans {
namespace {

// At most this many nodes are named in one message; the rest are counted.
constexpr size_t kNamed = 10;

std::string NameSome(const std::vector<std::string>& names) {
  std::vector<std::string> shown(names.begin(), names.begin() + std::min(names.size(), kNamed));
  std::string text = fmt::format("{}", fmt::join(shown, ", "));
  if (names.size() > kNamed) text += fmt::format(" and {} more", names.size() - kNamed);
  return text;
}

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

struct SnapshotMerge::Part {
  std::string source;
  ObservedState header;   ///< no nodes
  bool ended = false;
};

/// A read of a node that another part also has: kept aside until every header is known.
struct SnapshotMerge::Duplicate {
  size_t part;
  NodeObservation node;
};

SnapshotMerge::SnapshotMerge(MergeOptions options) : opt_(options) {}
SnapshotMerge::~SnapshotMerge() = default;

size_t SnapshotMerge::BeginPart(std::string source) {
  parts_.push_back(Part{std::move(source), {}, false});
  return parts_.size() - 1;
}

void SnapshotMerge::AddNode(size_t part, NodeObservation&& node) {
  auto [it, fresh] = owner_.try_emplace(node.node, part);
  if (fresh) {
    std::string name = node.node;
    merged_.nodes.insert_or_assign(std::move(name), std::move(node));
    return;
  }
  // Without --allow-duplicates only the names matter (the error lists them): the facts go.
  if (!opt_.allow_duplicates) node.facts.clear();
  duplicates_.push_back(Duplicate{part, std::move(node)});
}

void SnapshotMerge::EndPart(size_t part, const ObservedState& header) {
  Part& p = parts_.at(part);
  p.header.gathered_at = header.gathered_at;
  p.header.commit = header.commit;
  p.header.working_tree = header.working_tree;
  p.header.shard = header.shard;
  p.header.selection = header.selection;
  p.header.selection_nodes = header.selection_nodes;
  p.header.selection_digest = header.selection_digest;
  p.ended = true;
}

Result<ObservedState> SnapshotMerge::Finish(Diagnostics& diags) {
  const size_t errors_before = diags.ErrorCount();
  auto problem = [&diags](bool allowed, std::string code, std::string message, std::string key,
                          std::string hint) {
    if (allowed) diags.Add(Diagnostic::Warning(std::move(code), std::move(message), {}, std::move(key)));
    else diags.Add(Diagnostic::Error(std::move(code), std::move(message), {}, std::move(key), std::move(hint)));
  };

  // Duplicates: by pair of parts, so that a shard given twice is one message, not 2,500.
  std::map<std::pair<size_t, size_t>, std::vector<std::string>> dup_names;
  for (const Duplicate& d : duplicates_) dup_names[{owner_.at(d.node.node), d.part}].push_back(d.node.node);
  for (const auto& [pair, names] : dup_names) {
    problem(opt_.allow_duplicates, "facts.merge-duplicate",
            fmt::format("{} node(s) are in both {} and {}: {}", names.size(),
                        Quoted(parts_[pair.first].source), Quoted(parts_[pair.second].source),
                        NameSome(names)),
            "nodes",
            "each node must come from one part (were the same shard, or overlapping --limit "
            "values, gathered twice?); --allow-duplicates keeps the read gathered last");
  }
  if (opt_.allow_duplicates) {
    // The read gathered last wins; on equal times the later part on the command line.
    for (Duplicate& d : duplicates_) {
      size_t& owner = owner_.at(d.node.node);
      if (parts_[d.part].header.gathered_at >= parts_[owner].header.gathered_at) {
        owner = d.part;
        std::string name = d.node.node;
        merged_.nodes.insert_or_assign(std::move(name), std::move(d.node));
      }
    }
  }
  duplicates_.clear();

  // Commits: one, or the parts' list.
  std::map<std::string, std::vector<std::string>> by_commit;   // commit -> sources
  for (const Part& p : parts_)
    by_commit[p.header.commit.empty() ? "(none recorded)" : p.header.commit.substr(0, 12) +
                                            (p.header.working_tree ? " + uncommitted edits" : "")]
        .push_back(Quoted(p.source));
  if (by_commit.size() > 1) {
    std::vector<std::string> lines;
    for (const auto& [commit, sources] : by_commit)
      lines.push_back(fmt::format("{}: {}", commit, fmt::join(sources, ", ")));
    problem(opt_.allow_mixed_commits, "facts.merge-commits",
            fmt::format("the parts were gathered from different cluster repo commits ({})",
                        fmt::join(lines, "; ")),
            "commit",
            "gather every shard at one --ref (a commit SHA, not a moving branch); "
            "--allow-mixed-commits merges them anyway");
  }

  // Shards: a set of i/n parts must hold every i, each once, all of one n.
  std::map<int, std::set<int>> shards;   // n -> indexes given
  for (const Part& p : parts_) {
    if (p.header.shard.empty()) continue;
    auto s = ParseShard(p.header.shard);
    if (!s.ok()) {
      diags.Add(Diagnostic::Error("facts.merge-shard",
                                  fmt::format("{}: its shard '{}' is not i/n", Quoted(p.source), p.header.shard),
                                  {}, "shard", "write it with plumb gather --shard i/n"));
      continue;
    }
    shards[s->count].insert(s->index);
  }
  if (shards.size() > 1) {
    std::vector<int> counts;
    for (const auto& [n, indexes] : shards) counts.push_back(n);
    diags.Add(Diagnostic::Error("facts.merge-shard",
                                fmt::format("the parts are shards of different splits (of {} parts)",
                                            fmt::join(counts, ", ")),
                                {}, "shard", "merge the shards of one split (all --shard i/N with one N)"));
  }
  // Shards of different selections (another --limit, or the same text selecting other nodes)
  // are parts of different wholes: the merge would look complete and is not.
  std::map<std::string, std::vector<std::string>> by_selection;   // digest -> sources
  std::map<std::string, std::string> selection_text;                // digest -> how it reads
  for (const Part& p : parts_) {
    if (p.header.shard.empty()) continue;
    const std::string key = p.header.selection_digest.empty() ? "(not recorded)" : p.header.selection_digest;
    by_selection[key].push_back(Quoted(p.source));
    selection_text.try_emplace(
        key, p.header.selection_digest.empty()
                 ? std::string("selection not recorded (an older plumb)")
                 : fmt::format("{} ({} node(s))",
                               p.header.selection.empty() ? std::string("all nodes")
                                                          : "--limit " + Quoted(p.header.selection),
                               p.header.selection_nodes));
  }
  if (by_selection.size() > 1) {
    std::vector<std::string> lines;
    for (const auto& [key, sources] : by_selection)
      lines.push_back(fmt::format("{}: {}", selection_text[key], fmt::join(sources, ", ")));
    diags.Add(Diagnostic::Error("facts.merge-selection",
                                fmt::format("the shards were gathered from different selections of nodes ({})",
                                            fmt::join(lines, "; ")),
                                {}, "selection",
                                "gather every shard of one split with the same --limit (plumb gather "
                                "--limit L --shard i/N for each i)"));
  }
  for (const auto& [n, indexes] : shards) {
    std::vector<std::string> missing;
    for (int i = 1; i <= n; ++i)
      if (!indexes.count(i)) missing.push_back(fmt::format("{}/{}", i, n));
    if (!missing.empty())
      problem(opt_.allow_missing_shards, "facts.merge-missing-shard",
              fmt::format("shard(s) {} are missing: the merge would lack their nodes",
                          fmt::join(missing, ", ")),
              "shard",
              "give every shard's file (did a runner fail?); --allow-missing-shards merges what "
              "is there, and plan/drift then treat the missing nodes as unread");
  }

  if (diags.ErrorCount() > errors_before) return Diagnostic::Error("facts.merge", "the parts were not merged");

  merged_.gathered_at.clear();
  for (const Part& p : parts_)
    if (!p.header.gathered_at.empty() &&
        (merged_.gathered_at.empty() || p.header.gathered_at < merged_.gathered_at))
      merged_.gathered_at = p.header.gathered_at;
  merged_.commit = by_commit.size() == 1 && !parts_.empty() ? parts_.front().header.commit : "";
  merged_.working_tree = std::any_of(parts_.begin(), parts_.end(),
                                     [](const Part& p) { return p.header.working_tree; });
  merged_.shard.clear();
  // One selection throughout: the merge is that selection, whole (or as much as was given).
  const bool one_selection =
      !parts_.empty() && std::all_of(parts_.begin(), parts_.end(), [&](const Part& p) {
        return !p.header.selection_digest.empty() &&
               p.header.selection_digest == parts_.front().header.selection_digest;
      });
  if (one_selection) {
    merged_.selection = parts_.front().header.selection;
    merged_.selection_nodes = parts_.front().header.selection_nodes;
    merged_.selection_digest = parts_.front().header.selection_digest;
  } else {
    merged_.selection.clear();
    merged_.selection_nodes = 0;
    merged_.selection_digest.clear();
  }
  owner_.clear();
  return std::move(merged_);
}

}  // namespace plumb::plans
