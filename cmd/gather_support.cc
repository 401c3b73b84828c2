#include <cstdio>

#include <fmt/format.h>

#include "cmd/gather_support.h"
#include "cmd/color.h"
#include "cmd/repo_load.h"
#include "inventory/load.h"
#include "modules/probe_script.h"
#include "modules/registry.h"

namespace plumb::cmd {

std::string RepoRoot(const GlobalOptions& g) { return g.repo; }

Result<inventory::Cluster> LoadClusterForGather(const GlobalOptions& g, Diagnostics& diags) {
  inventory::LoadedCluster loaded = LoadRepo(g.repo, g.ref, g.working_tree);
  // Gather observes; it needs the nodes and their SSH settings, not the desired state. Errors
  // that only concern desired state (stacks, rollouts, waivers, pin coherence, a node with no
  // stack or rollout policy yet) are shown as warnings; anything wrong with the source or the inventory itself
  // stops it.
  bool fatal = false;
  for (Diagnostic d : loaded.diags.items()) {
    if (d.severity == Severity::kError) {
      bool desired_only = d.code == "inventory.no-stack" || d.code == "inventory.no-rollout" ||
                          d.code.rfind("coherence.", 0) == 0 ||
                          d.where.file.rfind("stacks/", 0) == 0 ||
                          d.where.file.rfind("rollouts/", 0) == 0 || d.where.file == "waivers.yaml";
      if (desired_only) d.severity = Severity::kWarning;
      else fatal = true;
    }
    diags.Add(std::move(d));
  }
  if (fatal || loaded.cluster.nodes.empty()) {
    return Diagnostic::Error("gather.inventory",
                             fmt::format("the cluster repo {} at {} has errors (above), or no "
                                         "nodes; gather needs a valid inventory",
                                         g.repo, g.ref),
                             {}, {}, "run `plumb validate` for the full report");
  }
  return std::move(loaded.cluster);
}

std::string ProbeScriptFor(const std::vector<const modules::Module*>& modules) {
  auto script = modules::BuildProbeScript(modules, modules::NewProbeNonce());
  return script.ok() ? *script : std::string();
}

bool ProgressOnStderr() { return TerminalCanDraw(2); }

void NodeProgressLine::OnNodeDone(const plans::NodeObservation& n, size_t done, size_t total) {
  if (!n.reachable) ++failed_;
  std::fprintf(stderr, "\r%s: %zu/%zu nodes%s", label_.c_str(), done, total,
               failed_ ? fmt::format(" ({} unreadable)", failed_).c_str() : "");
  if (done == total) std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace plumb::cmd
