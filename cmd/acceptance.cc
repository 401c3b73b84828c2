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
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmd/apply_deps.h"
#include "cmd/command.h"
#include "cmd/read_run.h"
#include "cmd/ssh_factory.h"
#include "modules/registry.h"
#include "plans/core/clock.h"
#include "modules/transport/local_shell.h"
#include "plans/report/acceptance.h"
#include "plans/report/drift.h"
#include "plans/rollout/health_run.h"
#include "plans/session/burn_in.h"
#include "schemas/validate.h"

namespace plumb::cmd {

// This command's rows of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kAcceptanceVerb = "acceptance";
constexpr std::string_view kVerifyVerb = "acceptance verify";
namespace {

struct AcceptanceArgs {
  ReadRunArgs read;
  std::string out;
  int dcgm_level = 3;
  int timeout_s = 7200;
  int health_fanout = 16;
  std::string operator_name;
  bool fresh = false;
  bool allow_busy = false;
  std::string verify_path;
};

std::string OperatorName(const std::string& given) {
  if (!given.empty()) return given;
  for (const char* v : {"SUDO_USER", "USER", "LOGNAME"})
    if (const char* u = std::getenv(v); u && *u) return u;
  return "unknown";
}

int RunVerify(const AcceptanceArgs& a) {
  std::ifstream in(a.verify_path);
  if (!in) {
    std::fprintf(stderr, "error: cannot read %s\n", a.verify_path.c_str());
    return ExitCodeFor(kVerifyVerb, Outcome::kError);
  }
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded()) {
    std::fprintf(stderr, "error: %s is not JSON\n", a.verify_path.c_str());
    return ExitCodeFor(kVerifyVerb, Outcome::kRefused);
  }
  // The shape first (a report this plumb cannot read is refused, not "verified"), then the digest.
  Diagnostics shape;
  if (!schemas::ValidateJson(doc, "acceptance.schema.json", a.verify_path, schemas::Marks{}, shape)) {
    std::fputs(shape.ToText().c_str(), stderr);
    return ExitCodeFor(kVerifyVerb, Outcome::kRefused);
  }
  Status st = plans::report::VerifyAcceptanceDigest(doc);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.error().ToString().c_str());
    return ExitCodeFor(kVerifyVerb, st.error().code == "acceptance.digest" ? Outcome::kNotVerified
                                                                           : Outcome::kRefused);
  }
  std::printf("%s: the digest matches the content (%s; a checksum, not a signature); cluster %s, "
              "commit %s, %d of %d node(s) passed\n",
              a.verify_path.c_str(), doc.value("digest", "").c_str(), doc.value("cluster", "").c_str(),
              doc.value("commit", "").c_str(), doc["summary"].value("passed", 0),
              doc["summary"].value("nodes", 0));
  return ExitCodeFor(kVerifyVerb, Outcome::kOk);
}

// 2. The health modules at the burn-in level, on the nodes not already done at this commit.
// Read-only: what the schedulers say now, so burn-in never loads the GPUs under a job.
std::vector<plans::NodeHealth> BurnInHealth(const GlobalOptions& g, const AcceptanceArgs& a,
                                            const ReadRun& r,
                                            const plans::report::DriftReport& drift) {
  const std::string commit = r.loaded.cluster.source.commit;
  transport::LocalShell local(SchedulerEnv());
  const plans::SchedulerView view = a.allow_busy ? plans::SchedulerView{}
                                                 : plans::ReadSchedulers(RealSchedulers(r.loaded.cluster, local));
  std::vector<std::string> nodes;
  for (const auto& dn : drift.nodes) nodes.push_back(dn.node);
  // Uncommitted edits have no commit to key a kept result by: every node runs.
  plans::BurnIn burn = plans::PlanBurnIn(
      nodes, r.loaded, view,
      {.dir = a.out, .commit = commit, .level = a.dcgm_level,
       .reuse_kept = !a.fresh && !g.working_tree, .allow_busy = a.allow_busy});
  std::vector<plans::NodeHealth> health = std::move(burn.kept);
  if (!health.empty())
    std::fprintf(stderr, "acceptance: %zu node(s) already checked at commit %.12s (level %d) in %s; "
                 "--fresh runs them again\n", health.size(), commit.c_str(), a.dcgm_level, a.out.c_str());
  auto shells = MakeNodeShells(r.loaded.cluster.ssh, RepoRoot(g), a.read.accept_new_host_keys);
  std::vector<plans::NodeHealth> ran = plans::RunHealth(
      burn.targets, *shells, modules::AllModules(), a.health_fanout, std::chrono::seconds(a.timeout_s),
      [&](const plans::NodeHealth& h, size_t done, size_t total) {
        // Kept as it finishes: an interrupted acceptance resumes from here. Unreachable nodes
        // are not kept (they run again next time).
        if (h.reachable) {
          const nlohmann::json keep = plans::KeptHealthRecord(
              h, commit, a.dcgm_level, plans::Rfc3339(std::chrono::system_clock::now()));
          if (Status s = WriteOutput(plans::KeptHealthPath(a.out, h.node), JsonText(keep)); !s.ok())
            std::fprintf(stderr, "warning: %s\n", s.error().ToString().c_str());
        }
        std::fprintf(stderr, "acceptance: health %zu/%zu: %s %s\n", done, total, h.node.c_str(),
                     modules::CheckStatusName(h.Verdict()));
      });
  for (plans::NodeHealth& h : ran) health.push_back(std::move(h));
  return health;
}

// 3. The report: written to DIR, summed up on stdout.
int WriteAcceptance(const AcceptanceArgs& a, const ReadRun& r,
                    const plans::report::DriftReport& drift,
                    const std::vector<plans::NodeHealth>& health, const std::string& started) {
  const std::string commit = r.loaded.cluster.source.commit;
  plans::report::AcceptanceMeta meta;
  meta.cluster = r.loaded.cluster.name;
  meta.repo_ref = r.loaded.cluster.source.ref;
  meta.commit = commit;
  meta.operator_name = OperatorName(a.operator_name);
  meta.started_at = started;
  meta.finished_at = plans::Rfc3339(std::chrono::system_clock::now());
  meta.tool_version = PLUMB_VERSION;
  meta.dcgm_level = a.dcgm_level;
  plans::report::AcceptanceReport report =
      plans::report::MakeAcceptanceReport(meta, drift, r.observed, health);
  const nlohmann::json doc = plans::report::AcceptanceToJson(report);
  for (const auto& [file, text] : {std::pair<std::string, std::string>{"acceptance.json", JsonText(doc)},
                                   {"acceptance.html", plans::report::AcceptanceToHtml(doc)}}) {
    if (Status s = WriteOutput(a.out + "/" + file, text); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.error().ToString().c_str());
      return ExitCodeFor(kAcceptanceVerb, Outcome::kError);
    }
  }
  std::printf("acceptance %s: %d of %zu node(s) passed, %d failed (commit %.12s, DCGM level %d)\n",
              report.Failed() == 0 ? "ACCEPTED" : "REJECTED", report.Passed(), report.nodes.size(),
              report.Failed(), commit.c_str(), a.dcgm_level);
  for (const auto& n : report.nodes)
    for (const std::string& why : n.reasons) std::printf("  %s: %s\n", n.node.c_str(), why.c_str());
  std::printf("report: %s/acceptance.json (digest %s), %s/acceptance.html\n", a.out.c_str(),
              doc.value("digest", "").c_str(), a.out.c_str());
  return ExitCodeFor(kAcceptanceVerb, report.Failed() == 0 ? Outcome::kOk : Outcome::kUnhealthy);
}

int RunAcceptance(const GlobalOptions& g, const AcceptanceArgs& a) {
  if (a.out.empty()) {
    std::fprintf(stderr, "error: --out DIR is required (the report's directory)\n");
    return ExitCodeFor(kAcceptanceVerb, Outcome::kRefused);
  }
  if (a.dcgm_level < 1 || a.dcgm_level > 4 || a.timeout_s < 1 || a.health_fanout < 1) {
    std::fprintf(stderr, "error: --dcgm-level takes 1-4; --timeout and --health-fanout at least 1\n");
    return ExitCodeFor(kAcceptanceVerb, Outcome::kRefused);
  }
  const std::string started = plans::Rfc3339(std::chrono::system_clock::now());
  std::error_code ec;
  std::filesystem::create_directories(a.out + "/nodes", ec);
  if (ec) {
    std::fprintf(stderr, "error: cannot create %s/nodes: %s\n", a.out.c_str(), ec.message().c_str());
    return ExitCodeFor(kAcceptanceVerb, Outcome::kError);
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
  auto* sub = app.add_subcommand(
      "acceptance", "Burn-in acceptance: every health check at the burn-in level and every pin "
                    "verified, as a report (JSON with a digest, and HTML) in --out DIR");
  AddSourceOptions(*sub, g);
  AddReadRunOptions(*sub, a.read);
  sub->add_option("--out", a.out, "The report's directory (acceptance.json, acceptance.html, nodes/)");
  sub->add_option("--dcgm-level", a.dcgm_level,
                  "DCGM diagnostic level for nodes whose stack pins dcgm (3: ~30 min per node; 4: hours)")
      ->capture_default_str();
  sub->add_option("--timeout", a.timeout_s, "Seconds one node's health checks may take, all together")
      ->capture_default_str();
  sub->add_option("--health-fanout", a.health_fanout, "Nodes whose health checks run at once")
      ->capture_default_str();
  sub->add_option("--operator", a.operator_name, "Who runs the acceptance (default: $SUDO_USER or $USER)");
  sub->add_flag("--allow-busy", a.allow_busy,
                "Burn in nodes the scheduler shows running jobs too (without it their DCGM and NCCL "
                "checks are held, and they do not pass)");
  sub->add_flag("--fresh", a.fresh, "Run every node's checks again, even those kept in DIR/nodes/");
  sub->footer(
      "Read-only on the nodes: no drain; the scheduler is only read. The DCGM and NCCL checks\n"
      "load every GPU: on a node running jobs they are held (the node does not pass) unless\n"
      "--allow-busy. Run it before the cluster takes jobs. Interrupted, it resumes: a second\n"
      "run with the same --out, commit and level checks only the nodes that have not passed yet\n"
      "(kept in DIR/nodes/).\n\n"
      "Examples:\n"
      "  plumb acceptance --repo pod-a --ref v1.0 --out handover/\n"
      "  plumb acceptance --limit @h100 --dcgm-level 4 --out burnin/ --operator 'Jane Doe'\n"
      "  plumb acceptance verify handover/acceptance.json");
  auto* verify = sub->add_subcommand("verify", "Re-check an acceptance report's digest (exit 1 when it was changed)");
  verify->add_option("report", a.verify_path, "acceptance.json")->required();
  verify->footer("Examples:\n  plumb acceptance verify handover/acceptance.json");
  verify->callback([&run] { run = [] { return RunVerify(a); }; });
  sub->callback([&run, &g, sub] {
    if (sub->got_subcommand("verify")) return;   // verify's callback set `run`
    run = [&g] { return RunAcceptance(g, a); };
  });
}

}  // namespace plumb::cmd
