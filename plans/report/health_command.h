#pragma once
/// `plumb health` from its parsed flags to its exit code: the cluster repo, the selected nodes,
/// what the schedulers say now (unless --allow-busy: the checks that load every GPU are held on
/// a node running jobs), every node's pinned checks over SSH, the report. Every side effect
/// comes in through HealthSources (cmd/: the repo on disk, SSH, Slurm's CLI on this host).
#include <cstdio>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "inventory/load.h"
#include "plans/observe/gather.h"
#include "plans/observe/schedulers.h"
#include "plans/report/command_outcomes.h"

namespace plumb::plans::report {

struct HealthCommandRequest {
  std::string limit;
  int fanout = 16;
  int timeout_s = 3600;         ///< one node's checks, all together
  bool allow_busy = false;
  std::string format = "text";  ///< text | json | junit | prom
  std::string file;             ///< --out ("" = `out`)
};

struct HealthSources {
  std::function<inventory::LoadedCluster()> load;
  /// The one-line headline of a load with errors (its diagnostics are said above it).
  std::function<Diagnostic(const inventory::LoadedCluster&)> load_failure;
  std::function<SchedulerView(const inventory::Cluster&)> schedulers;   ///< read-only
  std::function<std::unique_ptr<ShellFactory>(const inventory::Cluster&)> shells;
  std::vector<const modules::Module*> modules;
  HealthProgress progress;
  TextStyle style;                        ///< the text report's (colour on a terminal)
  std::function<double()> elapsed_s;      ///< seconds since the command started
  std::function<long long()> now_unix;    ///< the report's time (prom, junit), once checked
};

/// A line per node rewritten in place on a terminal (`tty`); in a log, one line per node that
/// did not pass. Written to `out`.
HealthProgress HealthProgressTo(std::FILE* out, bool tty);

/// The whole command: diagnostics and errors on `err`, the report on `out` or --out; returns
/// the "health" exit code.
int RunHealthCommand(const HealthCommandRequest& req, const HealthSources& src, std::ostream& out,
                     std::ostream& err);

}  // namespace plumb::plans::report
