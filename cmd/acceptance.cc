// plumb acceptance: the burn-in acceptance report. Runs every health module each node's stack
// pins (DCGM at the burn-in level), plus a full drift check of every pin, and writes the report
// a GPU cluster is handed over on: acceptance.json (schemas/acceptance.schema.json, with a
// digest) and acceptance.html, in --out DIR. Read-only on the nodes (no drain; the scheduler is
// only read, to hold the GPU-loading checks on nodes running jobs): run it before the cluster
// takes jobs. Resumable: each node's passing health result is kept in DIR/nodes/ as it
// finishes, and a second run at the same commit and level reuses them.
// `plumb acceptance verify REPORT` re-checks a report's digest.
// Its exit codes are the "acceptance" rows of schemas/exit_codes.cc.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/acceptance_command.h"
#include "cmd/apply_deps.h"
#include "cmd/command.h"
#include "cmd/read_run.h"
#include "cmd/ssh_factory.h"
#include "modules/registry.h"
#include "plans/core/clock.h"
#include "plans/core/file_text.h"
#include "modules/transport/local_shell.h"
#include "plans/report/acceptance.h"
#include "plans/report/acceptance_outcome.h"
#include "plans/report/drift.h"
#include "plans/session/burn_in.h"

namespace plumb::cmd {

// This command's rows of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kAcceptanceVerb = "acceptance";
constexpr std::string_view kVerifyVerb = "acceptance verify";
namespace {

using AcceptanceArgs = cli::AcceptanceArgs;

const char* AcceptanceEnv(const char* name) { return std::getenv(name); }

int RunVerify(const AcceptanceArgs& a) {
  const plans::report::AcceptanceSaid said =
      plans::report::VerifyAcceptanceReport(a.verify_path, plans::ReadFileText(a.verify_path));
  std::fputs(said.err.c_str(), stderr);
  std::fputs(said.out.c_str(), stdout);
  return ExitCodeFor(kVerifyVerb, said.outcome);
}

// 2. The health modules at the burn-in level, on the nodes not already done at this commit.
// Read-only: what the schedulers say now, so burn-in never loads the GPUs under a job.
std::vector<plans::NodeHealth> BurnInHealth(const GlobalOptions& g, const AcceptanceArgs& a,
                                            const ReadRun& r,
                                            const plans::report::DriftReport& drift) {
  transport::LocalShell local(SchedulerEnv());
  const plans::SchedulerView view = a.allow_busy ? plans::SchedulerView{}
                                                 : plans::ReadSchedulers(RealSchedulers(r.loaded.cluster, local));
  std::vector<std::string> nodes;
  for (const auto& dn : drift.nodes) nodes.push_back(dn.node);
  // Uncommitted edits have no commit to key a kept result by: every node runs.
  const plans::BurnInOptions o{.dir = a.out, .commit = r.loaded.cluster.source.commit,
                               .level = a.dcgm_level, .reuse_kept = !a.fresh && !g.working_tree,
                               .allow_busy = a.allow_busy};
  plans::BurnIn burn = plans::PlanBurnIn(nodes, r.loaded, view, o);
  auto shells = MakeNodeShells(r.loaded.cluster.ssh, RepoRoot(g), a.read.accept_new_host_keys);
  return plans::RunBurnIn(
      burn, o, *shells, modules::AllModules(), a.health_fanout, std::chrono::seconds(a.timeout_s),
      {.write = WriteOutput,
       .say = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); },
       .now = [] { return plans::Rfc3339(std::chrono::system_clock::now()); }});
}

// 3. The report: written to DIR, summed up on stdout.
int WriteAcceptance(const AcceptanceArgs& a, const ReadRun& r,
                    const plans::report::DriftReport& drift,
                    const std::vector<plans::NodeHealth>& health, const std::string& started) {
  const inventory::Cluster& c = r.loaded.cluster;
  const plans::report::AcceptanceMeta meta{
      .cluster = c.name, .repo_ref = c.source.ref, .commit = c.source.commit,
      .operator_name = plans::OperatorName(a.operator_name, AcceptanceEnv), .started_at = started,
      .finished_at = plans::Rfc3339(std::chrono::system_clock::now()),
      .tool_version = PLUMB_VERSION, .dcgm_level = a.dcgm_level};
  const plans::report::AcceptanceSaid said = plans::report::WriteAcceptanceReport(
      plans::report::MakeAcceptanceReport(meta, drift, r.observed, health), a.out, WriteOutput);
  std::fputs(said.err.c_str(), stderr);
  std::fputs(said.out.c_str(), stdout);
  return ExitCodeFor(kAcceptanceVerb, said.outcome);
}

int RunAcceptance(const GlobalOptions& g, const AcceptanceArgs& a) {
  const std::string started = plans::Rfc3339(std::chrono::system_clock::now());
  if (auto refused = plans::PrepareBurnInDir(a.out, a.dcgm_level, a.timeout_s, a.health_fanout)) {
    std::fputs(refused->err.c_str(), stderr);
    return ExitCodeFor(kAcceptanceVerb, refused->outcome);
  }
  // 1. Every pin, read and judged as `plumb drift` does (no scheduler: nothing is drained).
  ReadRunArgs read = a.read;
  read.read_scheduler = false;
  if (!isatty(2)) std::fprintf(stderr, "acceptance: reading every node (drift check)\n");
  auto rr = DoReadRun(g, read);
  if (!rr.ok()) {
    std::fprintf(stderr, "%s\n", rr.error().ToString().c_str());
    return ExitCodeFor(kAcceptanceVerb, Outcome::kError);
  }
  const plans::report::DriftReport drift = DriftReportOf(**rr);
  const std::vector<plans::NodeHealth> health = BurnInHealth(g, a, **rr, drift);
  const int rc = WriteAcceptance(a, **rr, drift, health, started);
  KeepUntilExit(std::move(*rr));   // freeing a big run costs as long as reading it
  return rc;
}

}  // namespace

void RegisterAcceptance(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static AcceptanceArgs a;
  const cli::AcceptanceCommand c = cli::AddAcceptanceCommand(app, g, a);
  c.verify->callback([&run] { run = [] { return RunVerify(a); }; });
  c.acceptance->callback([&run, &g, sub = c.acceptance] {
    if (sub->got_subcommand("verify")) return;   // verify's callback set `run`
    run = [&g] { return RunAcceptance(g, a); };
  });
}

}  // namespace plumb::cmd
