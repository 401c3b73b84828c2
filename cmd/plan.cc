// plumb plan: what apply would change, and what it would disturb. Read-only.
// Its exit codes are the "plan" rows of schemas/exit_codes.cc (why no 3 is said there). A plan
// with errors (e.g. no batch fits max_unavailable) is shown but never written.
#include <cstdio>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "cli/plan_command.h"
#include "cmd/color.h"
#include "cmd/command.h"
#include "cmd/read_run.h"
#include "plans/report/command_outcomes.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kPlanVerb = "plan";
namespace {

using PlanArgs = cli::PlanArgs;

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
  CLI::App* sub = cli::AddPlanCommand(app, g, a);
  sub->callback([&run, &g] { run = [&g] { return RunPlanCommand(g, a); }; });
}

}  // namespace plumb::cmd
