// plumb plan: what apply would change, and what it would disturb. Read-only.
// Its exit codes are the "plan" rows of schemas/exit_codes.cc (why no 3 is said there). A plan
// with errors (e.g. no batch fits max_unavailable) is shown but never written.
#include <cstdio>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "cli/shared_options.h"
#include "cmd/color.h"
#include "cmd/command.h"
#include "cmd/read_run.h"
#include "plans/report/command_outcomes.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kPlanVerb = "plan";
namespace {

struct PlanArgs {
  ReadRunArgs read;
  std::string out;
  bool detailed_exitcode = false;
};

int ShowPlan(const GlobalOptions& g, const PlanArgs& a, ReadRun& rr) {
  plans::Plan& plan = rr.run.plan;
  plan.diags.Append(rr.run.diags);
  plan.diags.Append(rr.loaded.diags);   // warnings only (errors stopped the load)
  plans::report::PlanOutput o;
  o.format = g.format;
  o.file = a.out;
  o.detailed_exitcode = a.detailed_exitcode;
  // The commit as the signing policy judged it: shown to the reviewer with the plan.
  if (rr.trust)
    o.notes.push_back(fmt::format("Commit {}: {}", rr.trust->commit.substr(0, 12), rr.trust->note));
  const bool colour = ColorOn(g.color, stdout);
  o.style = plans::report::ReportStyle(colour);
  return plans::report::EmitPlan(plan, o, std::cout, std::cerr);
}

int RunPlanCommand(const GlobalOptions& g, const PlanArgs& a) {
  return ShowReadRun(kPlanVerb, g, a.read, [&](ReadRun& rr) { return ShowPlan(g, a, rr); });
}

}  // namespace

void RegisterPlan(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static PlanArgs a;
  auto* sub = app.add_subcommand(
      "plan", "Show what apply would change on each node and what it would disturb (read-only)");
  AddSourceOptions(*sub, g);
  AddReadRunOptions(*sub, a.read);
  AddTrustOption(*sub, a.read.trust_from);
  a.read.check_trust = true;
  sub->add_flag("--no-scheduler", a.read.no_scheduler,
                "Do not query the schedulers (Slurm, Kubernetes): the plan then cannot count nodes "
                "already out or running jobs");
  sub->add_option("--out", a.out, "Write the plan file (JSON, schemas/plan.schema.json) for apply");
  sub->add_flag("--detailed-exitcode", a.detailed_exitcode,
                "Exit 0 no changes (failed health checks are findings, not changes), 2 changes "
                "pending, 1 error (also: no changes but nodes unreadable)");
  cli::AddFormat(*sub, g.format, "Output: text (human), json (the plan file), or markdown (a "
                 "pull-request comment, at most 65,536 characters: cut with a count and a pointer "
                 "to --out)", {"text", "json", "markdown"});
  sub->footer(
      "Reads the cluster repo at --ref, the nodes' live state (or --facts), and the schedulers\n"
      "the rollout policies drain through (Slurm, Kubernetes; read only), then prints per node\n"
      "each change with its disruption and reason (repair: the node drifted from what it was\n"
      "applied at; intent: the repo changed), identical nodes collapsed, and a summary: nodes\n"
      "to drain/reboot/re-flash, batches, peak nodes out, estimated duration, jobs (and pods\n"
      "a PodDisruptionBudget holds) blocking a drain, nodes the scheduler does not know,\n"
      "unreadable nodes. Failed health checks (gpu_health, ib_health) are a Health section of\n"
      "findings, never changes; a node with changes and a failed check is skipped when its\n"
      "rollout says unhealthy: skip. The facts' time is shown; a --facts snapshot older than\n"
      "--max-facts-age warns.\n\n"
      "When the repo has a policy.yaml asking for signed commits, the commit must be signed by\n"
      "a key the policy at its trusted base allows (its first parent, or --trust-policy-from);\n"
      "otherwise the plan is refused before any node is read.\n\n"
      "Exit: 0 ok; with --detailed-exitcode 0 no changes, 2 changes; 1 error, including an\n"
      "incomplete plan with no changes (some nodes unreadable: they are listed).\n\n"
      "Examples:\n"
      "  plumb plan --repo pod-a --ref main\n"
      "  plumb plan --ref $SHA --out plan.json --detailed-exitcode     # CI on a pull request\n"
      "  plumb plan --ref $SHA --out plan.json --format markdown --trust-policy-from origin/main\n"
      "      > comment.md                                              # the PR comment\n"
      "  plumb plan --facts facts.json --limit 'gpu0[01-16]'");
  sub->callback([&run, &g] { run = [&g] { return RunPlanCommand(g, a); }; });
}

}  // namespace plumb::cmd
