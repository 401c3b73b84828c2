#include "cli/gather_command.h"

#include "cli/shared_options.h"

namespace plumb::cli {

CLI::App* AddGatherCommand(CLI::App& app, GlobalOptions& g, GatherArgs& a) {
  auto* sub = app.add_subcommand(
      "gather",
      "Read every node's live state (one SSH round trip per node) and print its facts");
  AddSourceOptions(*sub, g);
  AddNodeLimit(*sub, a.req.limit, "Nodes to read");
  sub->add_option("--shard", a.req.shard,
                  "Read only part i of n of the selected nodes (1/4 .. 4/4; by name hash, "
                  "stable as nodes are added): n runners, then `plumb facts merge`");
  AddFormat(*sub, g.format, "Output: text or json (the facts snapshot format)", {"text", "json"});
  sub->add_option("--fanout", a.req.fanout, "Nodes probed at once (one SSH session each)")
      ->capture_default_str();
  AddHostKeysFlag(*sub, a.accept_new_host_keys);
  sub->add_flag("--no-bmc", a.req.no_bmc,
                "Do not read BMCs over Redfish (the snapshot then has no firmware, bios or "
                "power facts: plan/drift --facts call those keys unread on nodes with a BMC)");
  sub->add_option("--facts-out", a.req.facts_out,
                  "Also write the observed facts snapshot (JSON) to FILE");
  sub->add_flag("--print-probe-script", a.print_probe_script,
                "Print the probe script one node runs (fresh nonce) and exit; nothing is "
                "contacted");
  sub->footer(
      "Read-only: the only command sent to a node is the probe script (--print-probe-script);\n"
      "a node's BMC (inventory bmc:) is read over Redfish at the same time (GETs, in a session\n"
      "it deletes after).\n\n"
      "Examples:\n"
      "  plumb gather                                  every node: one line each, what it runs\n"
      "  plumb gather --limit 'gpu00[1-4],!gpu003'     three nodes\n"
      "  plumb gather --format json > facts.json       the facts snapshot, for plan --facts\n"
      "  plumb gather --facts-out facts.json           the table, and the snapshot kept\n"
      "  plumb gather --fanout 256 --limit @h100       a big pool, more sessions at once\n"
      "  plumb gather --shard 2/4 --facts-out s2.json  one runner's quarter of the fleet;\n"
      "  plumb facts merge s1.json s2.json s3.json s4.json > facts.json   the whole of it\n"
      "  plumb gather --print-probe-script | less      what runs on each node");
  return sub;
}

FactsCommand AddFactsCommand(CLI::App& app, FactsMergeArgs& a) {
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
  return {facts, merge};
}

}  // namespace plumb::cli
