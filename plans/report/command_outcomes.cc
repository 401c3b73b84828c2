#include "plans/report/command_outcomes.h"

#include <memory>
#include <optional>

#include <fmt/format.h>

#include "plans/plan/plan_json.h"
#include "plans/report/desired_diff.h"
#include "plans/report/plan_markdown.h"
#include "plans/report/plan_text.h"
#include "schemas/exit_codes.h"

namespace plumb::plans::report {
namespace {

std::string Styled(const TextStyle& style, std::string text) {
  return style ? style(std::move(text)) : text;
}

int HealthExitCode(const HealthReport& r) {
  // Precedence: a failed check > a node that could not be checked > healthy.
  if (r.Failed() > 0) return ExitCodeFor("health", Outcome::kUnhealthy);
  if (r.Unreachable() > 0) return ExitCodeFor("health", Outcome::kPartial);
  return ExitCodeFor("health", Outcome::kOk);
}

// The plan itself, on `out`; what only a person reading a terminal needs goes to `err`.
void ShowPlanAs(const Plan& plan, const PlanOutput& o, const std::optional<PlanFile>& file,
                std::ostream& out, std::ostream& err) {
  if (o.format == "json") {
    file->WriteTo(out);
  } else if (o.format == "markdown") {
    MarkdownOptions mo;
    mo.notes = o.notes;
    if (!o.file.empty())
      mo.artefact = fmt::format("the plan file `{}` (the pipeline's artefact)",
                                o.file.substr(o.file.rfind('/') + 1));
    out << PlanToMarkdown(plan, mo);
  } else {
    for (const std::string& n : o.notes) err << n << "\n";
    if (plan.source.working_tree)
      err << "warning: planning UNCOMMITTED edits in " << plan.source.repo
          << "; apply will refuse this plan unless forced\n";
    out << Styled(o.style, PlanToText(plan));
  }
  out.flush();
}

}  // namespace

CommandOutcome DriftCommandOutcome(const DriftReport& report, const std::string& format,
                                   const RenderOptions& ro, const TextStyle& style) {
  CommandOutcome o;
  o.render = [&report, format, ro, style](std::ostream& out) {
    if (format == "json") DriftToJson(report, out);
    else if (format == "junit") DriftToJunit(report, out);
    else if (format == "sarif") DriftToSarif(report, ro, out);
    else if (format == "prom") out << DriftToProm(report, ro);
    else if (format == "html") out << DriftToHtml(report);
    else out << Styled(style, DriftToText(report));
  };
  o.verdict = fmt::format("plumb drift: {}: {} of {} node(s) drifted ({} key(s)), {} waived, "
                          "{} unreadable",
                          DriftVerdictName(report.verdict), report.drifted_nodes,
                          report.nodes.size(), report.drift_keys, report.waived_keys,
                          report.unreadable_nodes);
  o.exit_code = DriftExitCode(report);
  return o;
}

CommandOutcome HealthCommandOutcome(const HealthReport& report, const std::string& format,
                                    long long now_unix, const TextStyle& style) {
  CommandOutcome o;
  o.render = [&report, format, now_unix, style](std::ostream& out) {
    if (format == "json") out << JsonText(HealthToJson(report));
    else if (format == "junit") out << HealthToJunit(report);
    else if (format == "prom") out << HealthToProm(report, now_unix);
    else out << Styled(style, HealthToText(report));
  };
  o.verdict = fmt::format("plumb health: {} node(s): {} passed, {} warned, {} failed, {} unreachable",
                          report.nodes.size(), report.Passed(), report.Warned(), report.Failed(),
                          report.Unreachable());
  o.exit_code = HealthExitCode(report);
  return o;
}

int EmitPlan(Plan& plan, const PlanOutput& o, std::ostream& out, std::ostream& err) {
  // The digest is for the plan file; the text plan does not show it, so it is only computed
  // (with the file's JSON, once) when a file or JSON is asked for.
  std::optional<PlanFile> file;
  if (o.format == "json" || o.format == "markdown" || !o.file.empty()) file.emplace(plan);
  ShowPlanAs(plan, o, file, out, err);
  if (plan.diags.HasErrors()) {
    err << "plumb plan: the plan has errors; "
        << (o.file.empty() ? "fix them and plan again" : "not written to " + o.file) << "\n";
    return ExitCodeFor("plan", Outcome::kError);
  }
  if (!o.file.empty()) {
    if (Status st = WriteOutputTo(o.file, out, [&file](std::ostream& f) { file->WriteTo(f); });
        !st.ok()) {
      err << st.error().ToString() << "\n";
      return ExitCodeFor("plan", Outcome::kError);
    }
    const std::string saved = fmt::format("Saved plan {} to {}\n", plan.digest, o.file);
    if (o.format == "text") out << saved << std::flush;
    if (o.format == "markdown") err << saved;
  }
  if (o.detailed_exitcode && plan.HasChanges()) return ExitCodeFor("plan", Outcome::kChanges);
  if (!plan.complete) {
    err << fmt::format("plumb: error: plan incomplete: {} node(s) could not be read (listed "
                       "above); no changes found on the others\n", plan.unreadable.size());
    return ExitCodeFor("plan", Outcome::kNoVerdict);
  }
  return ExitCodeFor("plan", Outcome::kInSync);
}

CommandOutcome DiffCommandOutcome(const inventory::LoadedCluster& before,
                                  const inventory::LoadedCluster& after, const std::string& format,
                                  bool detailed_exitcode, const TextStyle& style) {
  auto d = std::make_shared<DesiredDiff>(DiffDesired(before.desired, after.desired));
  d->from = before.cluster.source.commit.substr(0, 12);
  d->to = after.cluster.source.commit.substr(0, 12);
  d->cluster = after.cluster.name;
  CommandOutcome o;
  o.render = [d, format, style, from = before.cluster.source.commit,
              to = after.cluster.source.commit](std::ostream& out) {
    if (format == "json") {
      nlohmann::json j = DesiredDiffToJson(*d);
      j["from_commit"] = from;
      j["to_commit"] = to;
      out << j.dump(2) << "\n";
    } else if (format == "markdown") {
      out << DesiredDiffToMarkdown(*d);
    } else {
      out << Styled(style, DesiredDiffToText(*d));
    }
  };
  o.exit_code = ExitCodeFor("diff", detailed_exitcode && !d->nodes.empty() ? Outcome::kChanges
                                                                          : Outcome::kInSync);
  return o;
}

}  // namespace plumb::plans::report
