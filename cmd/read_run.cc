#include "cmd/read_run.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cmd/bmc_factory.h"
#include "cmd/plan_scheduler.h"
#include "cmd/repo_load.h"
#include "cmd/ssh_factory.h"
#include "modules/registry.h"
#include "modules/transport/local_shell.h"
#include "plans/core/clock.h"
#include "plans/observe/node_progress.h"
#include "plans/trust/signature_tools.h"

namespace plumb::cmd {

Result<plans::CommitTrust> CheckTrust(const std::string& repo, const std::string& commit,
                                      const std::string& trust_from) {
  transport::LocalShell local;
  plans::ToolSignatureVerifier verifier(local);
  return plans::CheckCommitTrust(repo, commit, trust_from, verifier);
}

Status WriteOutput(const std::string& path, const std::string& text) {
  return plans::WriteTextTo(path, std::cout, text);
}

namespace {

// Parsed snapshot nodes allowed to wait while the repo loads (PLUMB_PREFETCH_NODES overrides,
// for the benchmark): ~40 KB each with 41 keys a node (6 KB of text), so ~160 MB at most.
size_t PrefetchNodes() {
  if (const char* v = std::getenv("PLUMB_PREFETCH_NODES"))
    if (long n = std::atol(v); n > 0) return static_cast<size_t>(n);
  return 4096;
}

plans::report::ReadRunOptions ReadRunOptionsOf(const ReadRunArgs& a) {
  plans::report::ReadRunOptions o = a.run;
  o.note_no_scheduler = a.read_scheduler && a.no_scheduler;
  o.prefetch_nodes = PrefetchNodes();
  return o;
}

// What the run reads through, and the real things behind it (kept alive for the run).
struct RealReadWorld {
  plans::report::ReadRunSources sources;
  PlanScheduler scheduler;
  plans::NodeProgressLine progress{"reading nodes", stderr};
};

void WireRepo(const GlobalOptions& g, plans::report::ReadRunSources& s) {
  s.load = [g] { return inventory::LoadCluster(RepoLoadOptions(g.repo, g.ref, g.working_tree)); };
  s.load_failure = [g](const inventory::LoadedCluster& lc) {
    return RepoLoadFailure(lc, g.repo, g.ref, g.working_tree);
  };
  // The desired state at a marker commit: the repo as committed there.
  s.load_at = [repo = g.repo](const std::string& commit) {
    return plans::report::DesiredOfMarkerLoad(inventory::LoadCluster({repo, commit, false, {}}));
  };
  s.modules = modules::AllModules();
  s.now = [] { return plans::Rfc3339(std::chrono::system_clock::now()); };
}

void WireTransports(const GlobalOptions& g, const ReadRunArgs& a, RealReadWorld& w, ReadRun& rr) {
  plans::report::ReadRunSources& s = w.sources;
  if (a.read_scheduler && !a.no_scheduler)
    s.scheduler = [&w](const inventory::Cluster& c, const plans::DesiredByNode& d) {
      w.scheduler = MakePlanScheduler(c, d);
      return w.scheduler.drainer();
    };
  // The signed-commit policy, before any node is read: a refused commit is never planned.
  // Uncommitted edits have no signature to judge (and apply refuses their plans anyway).
  if (a.check_trust && !g.working_tree)
    s.check_commit = [&g, &a, &rr](const inventory::Cluster& c) -> Status {
      auto trust = CheckTrust(g.repo, c.source.commit, a.trust_from);
      if (!trust) return trust.error();
      rr.trust = std::move(trust.value());
      return OkStatus();
    };
  s.shells = [&g, &a](const inventory::Cluster& c) -> std::unique_ptr<plans::ShellFactory> {
    return MakeNodeShells(c.ssh, RepoRoot(g), a.accept_new_host_keys);
  };
  s.bmc = [&g](const inventory::Cluster& c, Diagnostics& notes) {
    return ClusterBmcOpener(g.repo, c, notes);
  };
  // The same progress line gather shows, on a terminal: a plan of 1,000 nodes reads for a
  // while before it prints anything.
  s.progress = ProgressOnStderr() ? &w.progress : nullptr;
}

}  // namespace

Result<std::unique_ptr<ReadRun>> DoReadRun(const GlobalOptions& g, const ReadRunArgs& a) {
  auto rr = std::make_unique<ReadRun>();
  RealReadWorld world;
  WireRepo(g, world.sources);
  WireTransports(g, a, world, *rr);
  if (Status st = plans::report::ReadAndPlan(ReadRunOptionsOf(a), world.sources, *rr); !st.ok())
    return st.error();
  return rr;
}

int ShowReadRun(std::string_view verb, const GlobalOptions& g, const ReadRunArgs& a,
                const std::function<int(ReadRun&)>& show) {
  auto rr = DoReadRun(g, a);
  if (!rr.ok()) {
    std::fprintf(stderr, "%s\n", rr.error().ToString().c_str());
    return ExitCodeFor(verb, Outcome::kError);
  }
  int rc = show(**rr);
  KeepUntilExit(std::move(*rr));
  return rc;
}

}  // namespace plumb::cmd
