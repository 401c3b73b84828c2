#pragma once
/// `plumb facts merge`: the facts snapshots of a sharded gather (or of gathers from several
/// runners) as one snapshot that plan and drift take with --facts. A merge never guesses: a
/// node in two parts, parts of different commits, or a shard missing from a set is an error
/// unless the caller says how to treat it.
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "plans/observe/observed.h"
#include "schemas/diagnostics.h"
#include "schemas/result.h"

namespace plumb::plans {

struct MergeOptions {
  /// A node in several parts: keep the read from the part gathered last (ties: the later
  /// part on the command line), and say so. Without it, duplicates are errors.
  bool allow_duplicates = false;
  /// Parts whose inventories came from different commits: merged, the result names no
  /// commit. Without it, an error.
  bool allow_mixed_commits = false;
  /// Parts that are shards of n where some of 1..n are absent. Without it, an error.
  bool allow_missing_shards = false;
};

/// Merges parts fed one node at a time, so that each part streams in (ReadObservedState with a
/// sink) and no part is held twice. Feed a part's nodes with AddNode, then its header with
/// EndPart; then Finish once.
class SnapshotMerge {
 public:
  explicit SnapshotMerge(MergeOptions options);
  ~SnapshotMerge();

  /// Starts part `source` (a file name, used in messages); returns its index.
  size_t BeginPart(std::string source);
  void AddNode(size_t part, NodeObservation&& node);
  /// The part's header keys (gathered_at, commit, working_tree, shard); its nodes are ignored.
  void EndPart(size_t part, const ObservedState& header);

  /// The merged snapshot: every node once; gathered_at is the oldest part's (the merge is as
  /// old as its oldest read), commit the parts' common commit. Errors are all collected into
  /// `diags` (one per problem, each naming the files), as are warnings for what an allow_*
  /// option let through; on any error nothing is returned.
  Result<ObservedState> Finish(Diagnostics& diags);

 private:
  struct Part;
  struct Duplicate;
  MergeOptions opt_;
  std::vector<Part> parts_;
  ObservedState merged_;
  std::map<std::string, size_t> owner_;   ///< node -> part its kept read came from
  std::vector<Duplicate> duplicates_;
};

/// `plumb facts merge`: every part file streamed into one SnapshotMerge (every unreadable part
/// named, not only the first). Refused, with every problem on `err` and nothing written; else
/// the merged snapshot to `file` (atomically) or, when it is "", to `out`, and a line on `err`
/// saying what was merged. Returns the "facts merge" exit code.
int MergeFactsFiles(const std::vector<std::string>& parts, const MergeOptions& options,
                    const std::string& file, std::ostream& out, std::ostream& err);

}  // namespace plumb::plans
