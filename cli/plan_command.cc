#include "cli/plan_command.h"

#include "cli/shared_options.h"

namespace plumb::cli {

CLI::App* AddPlanCommand(CLI::App& app, GlobalOptions& g, PlanArgs& a) {
  auto* sub = app.add_subcommand(
      "plan", "Show what apply would change on each node and what it would disturb (read-only)");
  AddSourceOptions(*sub, g);
  a.read.check_trust = true;   // a commit the signing policy refuses is never planned
  AddReadRunOptions(*sub, a.read);
  AddTrustOption(*sub, a.read.trust_from);
  sub->add_flag("--no-scheduler", a.read.no_scheduler,
                "Do not query the schedulers (Slurm, Kubernetes): the plan then cannot count nodes "
                "already out or running jobs");
  sub->add_option("--out", a.out, "Write the plan file (JSON, schemas/plan.schema.json) for apply");
  sub->add_flag("--detailed-exitcode", a.detailed_exitcode,
                "Exit 0 no changes (failed health checks are findings, not changes), 2 changes "
                "pending, 1 error (also: no changes but nodes unreadable)");
  AddFormat(*sub, g.format, "Output: text (human), json (the plan file), or markdown (a "
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
  return sub;
}

}  // namespace plumb::cli
