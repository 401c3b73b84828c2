#pragma once
/// The read-only run behind `plumb plan`, `drift`, `acceptance` and `bmc plan`: load the cluster
/// repo, select the nodes, read them (a gather over SSH and Redfish, or a recorded facts
/// snapshot), read the scheduler (plan only), and plan against the desired state at the nodes'
/// marker commits. Every side effect comes in through ReadRunSources, which cmd/ fills with the
/// real transports and the tests with fakes. Nothing here writes to a node.
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "inventory/load.h"
#include "modules/drain/drainer.h"
#include "modules/module.h"
#include "plans/observe/bmc_gather.h"
#include "plans/observe/gather.h"
#include "plans/observe/observed.h"
#include "plans/observe/plan_run.h"
#include "plans/report/drift.h"
#include "schemas/result.h"

namespace plumb::plans::report {

/// What the command line asks of a read run.
struct ReadRunOptions {
  std::string limit;          ///< --limit: node patterns ("" = every node)
  std::string facts;          ///< --facts FILE: a recorded snapshot instead of reading the nodes
  int fanout = 64;            ///< nodes read at once (live reads only)
  bool no_bmc = false;        ///< --no-bmc: BMCs are not read (nor missed in a snapshot)
  /// Plan only these modules' changes; empty: every module.
  std::vector<std::string> only_modules;
  /// A snapshot gathered longer ago than this before the run is warned about ("0s": never).
  std::string max_facts_age = "24h";
  /// The scheduler was left unread on purpose (plan --no-scheduler): the run says so.
  bool note_no_scheduler = false;
  /// Parsed snapshot nodes allowed to wait while the repo loads.
  size_t prefetch_nodes = 4096;
};

/// The world a read run reads, through interfaces. Empty functions are not called (as noted).
struct ReadRunSources {
  /// The cluster repo at the ref asked for (called once, while a snapshot parses ahead).
  std::function<inventory::LoadedCluster()> load;
  /// The one-line headline of a load with errors (its diagnostics are listed below it).
  std::function<Diagnostic(const inventory::LoadedCluster&)> load_failure;
  /// The desired state at a nodes' marker commit (empty: every change is intent).
  DesiredLoader load_at;
  /// Every module plumb knows.
  std::vector<const modules::Module*> modules;
  /// The read-only scheduler view of the cluster, owned by the caller (empty: not read).
  std::function<modules::Drainer*(const inventory::Cluster&, const DesiredByNode&)> scheduler;
  /// Judges the commit before any node is read (the signing policy); an error refuses it.
  std::function<Status(const inventory::Cluster&)> check_commit;
  /// The SSH shells of the cluster's nodes (live reads only).
  std::function<std::unique_ptr<ShellFactory>(const inventory::Cluster&)> shells;
  /// Opens the BMCs of the cluster's nodes, saying what it could not set up in the notes
  /// (empty: BMCs are not read).
  std::function<OpenBmc(const inventory::Cluster&, Diagnostics& notes)> bmc;
  ProgressObserver* progress = nullptr;   ///< live reads: a node done (may be null)
  std::function<std::string()> now;       ///< RFC 3339 UTC, the plan's time
};

/// What a read run found. Callers that keep more (cmd/: the commit's trust) derive from it.
struct ReadRunResult {
  inventory::LoadedCluster loaded;
  ObservedState observed;
  std::vector<const modules::Module*> ran;   ///< the modules whose facts this run has
  std::set<std::string> ran_names;
  PlanRun run;                               ///< the plan (unsealed) and run-level notes
  virtual ~ReadRunResult() = default;
};

/// The desired state of the repo as loaded at a nodes' marker commit (what ReadRunSources'
/// load_at gives), or the "plan.marker-commit" error with the load's first error.
Result<DesiredByNode> DesiredOfMarkerLoad(inventory::LoadedCluster old);

/// Everything up to the plan, into `rr`. An error leaves nothing to plan (a bad repo, --limit,
/// --fanout or --max-facts-age, an unreadable snapshot, a refused commit): the caller exits 1.
Status ReadAndPlan(const ReadRunOptions& o, const ReadRunSources& s, ReadRunResult& rr);

/// The drift report of a read run: every pinned key of every node read, judged (waivers as of
/// the plan's day).
DriftReport DriftReportOf(const ReadRunResult& r);

/// What `plumb drift` reports of a run: DriftReportOf with the run's notes and the load's
/// warnings, but not the loader's word on an expired waiver (the report warns about each
/// itself, saying whether drift it covered now counts: it would be said twice).
DriftReport DriftReportWithNotes(const ReadRunResult& r);

}  // namespace plumb::plans::report
