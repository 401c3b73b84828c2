// plumb runs: the apply runs in the journal, newest first (text or JSON). Also lists the nodes
// the scheduler shows drained by plumb for a run the journal does not know (a lost journal),
// with --scheduler.
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "cmd/command.h"
#include "plans/report/journal_views.h"
#include "plans/store/journal.h"
#include "plans/store/run_liveness.h"
#include "plans/store/store.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kRunsVerb = "runs";
namespace {

struct RunsArgs {
  std::string journal;
  int limit = 20;
  std::string old_limit;   ///< --limit: refused with a pointer to --last
  std::string run;   // details of one run
};

int RunsFailed(const std::string& message) {
  std::fprintf(stderr, "plumb runs: %s\n", message.c_str());
  return ExitCodeFor(kRunsVerb, Outcome::kError);
}

// One run: who, and where each node stands.
int ShowOneRun(const GlobalOptions& g, const std::string& id, plans::Journal& j) {
  auto r = j.GetRun(id);
  auto nodes = j.Nodes(id);
  if (!r || !nodes || !r->has_value()) return RunsFailed("no run " + id);
  plans::report::RunDetail d;
  d.run = **r;
  d.live = plans::LivenessOf(d.run, j);
  d.nodes = std::move(*nodes);
  for (const plans::NodeRecord& n : d.nodes)
    d.known.push_back(plans::StoppedNodeNote(d.run, n, d.live.live, j));
  d.unrecorded = plans::NodesWithoutRow(d.run, d.nodes);
  const std::string out =
      g.format == "json" ? plans::report::RunDetailJson(d) : plans::report::RunDetailText(d);
  std::fputs(out.c_str(), stdout);
  return ExitCodeFor(kRunsVerb, Outcome::kOk);
}

int RunRuns(const GlobalOptions& g, const RunsArgs& a) {
  if (int rc = RefuseRetiredCountLimit(kRunsVerb, a.old_limit); rc >= 0) return rc;
  auto chosen = plans::ChosenStore(a.journal);
  if (!chosen) return RunsFailed(chosen.error().ToString());
  auto j = plans::OpenStore(*chosen);
  if (!j) return RunsFailed(j.error().ToString());
  if (!a.run.empty()) return ShowOneRun(g, a.run, **j);
  auto runs = (*j)->ListRuns(a.limit);
  if (!runs) return RunsFailed(runs.error().ToString());
  std::vector<plans::report::RunRow> rows;
  for (plans::RunRecord& r : *runs) {
    std::string state = plans::LivenessOf(r, **j).state;
    rows.push_back({std::move(r), std::move(state)});
  }
  const std::string out =
      g.format == "json" ? plans::report::RunsJson(rows) : plans::report::RunsText(rows);
  std::fputs(out.c_str(), stdout);
  return ExitCodeFor(kRunsVerb, Outcome::kOk);
}

}  // namespace

void RegisterRuns(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* a = new RunsArgs;
  auto* sub = app.add_subcommand(
      "runs", "List apply runs from the journal, with who ran and approved them (or one run's "
              "nodes)");
  sub->add_option("run", a->run, "Show this run's nodes");
  sub->add_option("--store,--journal", a->journal, "The store: a SQLite file or a postgresql:// URL without a password (that goes in $PLUMB_STORE or ~/.pgpass; default as for apply)");
  sub->add_option("--last", a->limit, "How many runs, the latest first")->capture_default_str();
  // --limit takes node patterns everywhere else; here it used to count runs.
  AddRetiredCountLimit(*sub, a->old_limit);
  sub->add_option("--format", g.format, "text | json")->check(CLI::IsMember({"text", "json"}));
  sub->footer(
      "Each run records its operator (OS user), the CI job and who triggered it (GitHub Actions,\n"
      "GitLab CI), the approver (apply --approved-by or $PLUMB_APPROVED_BY), and the commit's\n"
      "author, committer and verified signer.\n\n"
      "Examples:\n"
      "  plumb runs                       the latest runs: commit, when, by whom, outcome\n"
      "  plumb runs 20261130-220000-4f2a  one run: who, and where each node stands\n"
      "  plumb runs --format json --last 100");
  sub->callback([&run, &g, a] { run = [&g, a] { return RunRuns(g, *a); }; });
}

}  // namespace plumb::cmd
