// plumb facts merge: one facts snapshot from the parts of a sharded gather (or of several
// runners' gathers), for plan/drift --facts. Reads files only; contacts nothing.
#include <iostream>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "plans/observe/facts_merge.h"

namespace plumb::cmd {

namespace {

struct FactsMergeArgs {
  std::vector<std::string> parts;
  std::string output;
  plans::MergeOptions merge;
};

}  // namespace

void RegisterFacts(CLI::App& app, GlobalOptions& /*g*/, std::function<int()>& run) {
  static FactsMergeArgs a;
  auto* facts = app.add_subcommand("facts", "Work with facts snapshots (plumb gather --format json / --facts-out)");
  facts->require_subcommand(1);
  facts->footer(
      "Examples:\n"
      "  plumb facts merge s1.json s2.json s3.json s4.json -o facts.json");
  auto* merge = facts->add_subcommand(
      "merge", "Merge the snapshots of a sharded gather (gather --shard i/n) into one, for "
               "plan/drift --facts");
  merge->add_option("parts", a.parts, "Snapshot files (plumb gather --facts-out or --format json)")
      ->required()
      ->check(CLI::ExistingFile);
  merge->add_option("-o,--output", a.output, "Write the merged snapshot to FILE (atomically) instead of stdout");
  merge->add_flag("--allow-duplicates", a.merge.allow_duplicates,
                  "A node in several parts: keep the read gathered last (default: refuse)");
  merge->add_flag("--allow-mixed-commits", a.merge.allow_mixed_commits,
                  "Merge parts gathered at different commits of the cluster repo (default: refuse)");
  merge->add_flag("--allow-missing-shards", a.merge.allow_missing_shards,
                  "Merge shards of a split with some absent (default: refuse; the missing nodes "
                  "then read as unread)");
  merge->footer(
      "Reads files only; contacts nothing. Refused, with every problem listed and nothing\n"
      "written: a node in two parts, parts of different commits, a split with a shard missing.\n"
      "Use -o rather than a shell redirection: `> FILE` empties FILE even when refused.\n"
      "The result's gathered_at is its oldest part's.\n\n"
      "Examples:\n"
      "  for i in 1 2 3 4; do plumb gather --shard $i/4 --facts-out s$i.json & done; wait\n"
      "  plumb facts merge -o facts.json s1.json s2.json s3.json s4.json\n"
      "  plumb drift --facts facts.json");
  merge->callback([&run] {
    run = [] { return plans::MergeFactsFiles(a.parts, a.merge, a.output, std::cout, std::cerr); };
  });
}

}  // namespace plumb::cmd
