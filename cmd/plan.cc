// plumb plan: what apply would change, and what it would disturb. Read-only.
// Its exit codes are the "plan" rows of schemas/exit_codes.cc (why no 3 is said there). A plan
// with errors (e.g. no batch fits max_unavailable) is shown but never written.
#include <cstdio>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "cmd/color.h"
#include "cmd/command.h"
#include "cmd/read_run.h"
#include "plans/plan/plan_json.h"
#include "plans/report/plan_markdown.h"
#include "plans/report/plan_text.h"

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
  // The digest is for the plan file; the text plan does not show it, so it is only computed
  // (with the file's JSON, once) when a file or JSON is asked for.
  const bool want_file = g.format == "json" || g.format == "markdown" || !a.out.empty();
  std::optional<plans::PlanFile> file;
  if (want_file) file.emplace(plan);

  // The commit as the signing policy judged it: shown to the reviewer with the plan.
  std::vector<std::string> notes;
  if (rr.trust)
    notes.push_back(fmt::format("Commit {}: {}", rr.trust->commit.substr(0, 12), rr.trust->note));
  if (g.format == "json") {
    file->WriteTo(std::cout);
    std::cout.flush();
  } else if (g.format == "markdown") {
    plans::report::MarkdownOptions mo;
    mo.notes = notes;
    if (!a.out.empty())
      mo.artefact = fmt::format("the plan file `{}` (the pipeline's artefact)",
                                a.out.substr(a.out.rfind('/') + 1));
    std::fputs(plans::report::PlanToMarkdown(plan, mo).c_str(), stdout);
  } else {
    for (const std::string& n : notes) std::fprintf(stderr, "%s\n", n.c_str());
    if (plan.source.working_tree)
      std::fprintf(stderr, "warning: planning UNCOMMITTED edits in %s; apply will refuse this "
                           "plan unless forced\n", plan.source.repo.c_str());
    std::fputs(ColorizeReport(plans::report::PlanToText(plan), ColorOn(g.color, stdout)).c_str(), stdout);
  }
  if (plan.diags.HasErrors()) {
    std::string what = a.out.empty() ? "fix them and plan again" : "not written to " + a.out;
    std::fprintf(stderr, "plumb plan: the plan has errors; %s\n", what.c_str());
    return ExitCodeFor(kPlanVerb, Outcome::kError);
  }
  if (!a.out.empty()) {
    if (Status st = WriteOutputWith(a.out, [&file](std::ostream& out) { file->WriteTo(out); });
        !st.ok()) {
      std::fprintf(stderr, "%s\n", st.error().ToString().c_str());
      return ExitCodeFor(kPlanVerb, Outcome::kError);
    }
    if (g.format == "text") std::printf("Saved plan %s to %s\n", plan.digest.c_str(), a.out.c_str());
    if (g.format == "markdown")
      std::fprintf(stderr, "Saved plan %s to %s\n", plan.digest.c_str(), a.out.c_str());
  }
  if (a.detailed_exitcode && plan.HasChanges()) return ExitCodeFor(kPlanVerb, Outcome::kChanges);
  if (!plan.complete) {
    std::fprintf(stderr, "plumb: error: plan incomplete: %zu node(s) could not be read (listed "
                 "above); no changes found on the others\n", plan.unreadable.size());
    return ExitCodeFor(kPlanVerb, Outcome::kNoVerdict);
  }
  return ExitCodeFor(kPlanVerb, Outcome::kInSync);
}

int RunPlanCommand(const GlobalOptions& g, const PlanArgs& a) {
  auto rr = DoReadRun(g, a.read);
  if (!rr.ok()) {
    std::fprintf(stderr, "%s\n", rr.error().ToString().c_str());
    return ExitCodeFor(kPlanVerb, Outcome::kError);
  }
  int rc = ShowPlan(g, a, **rr);
  KeepUntilExit(std::move(*rr));
  return rc;
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
  sub->add_option("--format", g.format,
                  "Output: text (human), json (the plan file), or markdown (a pull-request "
                  "comment, at most 65,536 characters: cut with a count and a pointer to --out)")
      ->check(CLI::IsMember({"text", "json", "markdown"}))
      ->capture_default_str();
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
