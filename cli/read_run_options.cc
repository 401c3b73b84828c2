#include "cli/read_run_options.h"

#include "cli/shared_options.h"

namespace plumb::cli {

void AddReadRunOptions(CLI::App& sub, ReadRunArgs& a) {
  AddNodeLimit(sub, a.run.limit);
  sub.add_option("--facts", a.run.facts,
                 "Use a recorded facts snapshot (from `plumb gather --facts-out`) instead of "
                 "reading the nodes");
  sub.add_option("--max-facts-age", a.run.max_facts_age,
                 "Warn when the --facts snapshot was gathered longer ago than this before the run "
                 "(90s, 10m, 4h, 2d; 0s: never)")
      ->capture_default_str();
  sub.add_option("--fanout", a.run.fanout, "Nodes read at once (one SSH session each)")
      ->capture_default_str();
  sub.add_flag("--no-bmc", a.run.no_bmc,
               "Do not read BMCs over Redfish (firmware, bios and power keys are then not "
               "checked; with --facts, BMC facts the snapshot lacks are not missed)");
  AddHostKeysFlag(sub, a.accept_new_host_keys);
}

void AddTrustOption(CLI::App& sub, std::string& trust_from) {
  sub.add_option("--trust-policy-from", trust_from,
                 "Judge the commit by the signing policy (policy.yaml) at this ref: a protected "
                 "branch or tag, the target branch before the merge (default: the commit's first "
                 "parent; never the commit itself)");
}

}  // namespace plumb::cli
