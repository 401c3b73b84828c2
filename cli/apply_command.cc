#include "cli/apply_command.h"

#include "cli/shared_options.h"

namespace plumb::cli {

namespace {

// What to apply: a plan file, or the repo at a ref; approval.
void AddApplySourceFlags(CLI::App& sub, GlobalOptions& g, plans::ApplyFlags& a,
                         RuledOptions& ruled) {
  ruled.push_back(sub.add_option("plan", a.plan_file,
                                 "Plan file from `plumb plan --out` (digest- and commit-checked)"));
  // apply's own --repo, --ref, --working-tree (not AddSourceOptions): --ref means more here,
  // and --working-tree is refused.
  ruled.push_back(sub.add_option("--repo", g.repo, "Cluster repo (a git repository)")
                      ->capture_default_str());
  ruled.push_back(sub.add_option("--ref", g.ref,
                                 "Plan at this ref now; with a plan file, apply at the commit the "
                                 "ref names now (the merge of the reviewed plan) if every planned "
                                 "node wants the same there, else refuse naming nodes and keys; "
                                 "with --retry-failed, plan there instead of the run's commit"));
  ruled.push_back(sub.add_flag("--working-tree", g.working_tree,
                               "(refused: apply reads committed files only)"));
  ruled.push_back(sub.add_flag("--auto-approve", a.auto_approve,
                               "Apply without asking (a plan made now, a plan file, a retry)"));
}

// Which run: resume, retry, the store, the lock, the nodes. Returns --resume.
CLI::Option* AddApplyRunFlags(CLI::App& sub, plans::ApplyFlags& a, RuledOptions& ruled) {
  auto* res = sub.add_option("--resume", a.resume_run,
                             "Continue an interrupted run (the latest unfinished one if no RUN)")
                  ->expected(0, 1);
  ruled.push_back(res);
  ruled.push_back(sub.add_option("--retry-failed", a.retry_failed,
                                 "Plan and apply again the nodes RUN left failed (drained); they "
                                 "return to service once they converge"));
  AddApplyStoreFlag(sub, a, ruled);
  ruled.push_back(sub.add_option("--force-unlock", a.force_unlock,
                                 "Release the cluster lock RUN holds, once its process is gone"));
  ruled.push_back(sub.add_option("--dead-owner", a.dead_owner,
                                 "With --force-unlock of a run on another host: HOST:PID of its "
                                 "owner, to confirm that process is dead"));
  ruled.push_back(sub.add_option("--limit", a.limit,
                                 "Only these nodes (n[1-3,5], gpu*, @h100, !gpu003): of a plan "
                                 "made now, of a plan file (its batches formed again), or of a "
                                 "--retry-failed"));
  return res;
}

constexpr const char* kApplyExamples =
    "Examples:\n"
    "  plumb apply plan.json                      apply a reviewed plan (shown, then y/N)\n"
    "  plumb apply plan.json --auto-approve       the same from a pipeline\n"
    "  plumb apply plan.json --ref main --auto-approve --trust-policy-from $BEFORE\n"
    "                                             after the merge: the reviewed plan at main's\n"
    "                                             commit, if main wants the same of its nodes\n"
    "  plumb apply plan.json --limit 'n[1-3,5]'   only those nodes of the plan\n"
    "  plumb apply --ref main                     plan now, show it, ask\n"
    "  plumb apply --resume                       continue the last unfinished run\n"
    "  plumb apply --retry-failed RUN             retry the nodes RUN left failed\n"
    "  plumb apply --force-unlock RUN             release a dead run's lock";

}  // namespace

void AddApplyStoreFlag(CLI::App& sub, plans::ApplyFlags& a, RuledOptions& ruled) {
  ruled.push_back(sub.add_option("--store,--journal", a.journal,
                                 "Where runs, the cluster lock and the history are kept: a SQLite file, or a "
                                 "postgresql:// URL shared by every machine, without a password: one here would "
                                 "show in ps for the whole run, and is refused; it goes in $PLUMB_STORE or "
                                 "~/.pgpass (default: $PLUMB_STORE, $PLUMB_JOURNAL, "
                                 "$XDG_STATE_HOME/plumb/journal.db, ~/.local/state/plumb/journal.db)"));
}

// The record: whose policy, who approved, the plan kept.
void AddApplyRecordFlags(CLI::App& sub, plans::ApplyFlags& a, RuledOptions& ruled) {
  ruled.push_back(sub.add_option("--trust-policy-from", a.trust_from,
                                 "Judge the commit by the signing policy (policy.yaml) at this ref "
                                 "(default: the commit's first parent; never the commit itself)"));
  ruled.push_back(sub.add_option("--approved-by", a.approved_by,
                                 "Who approved this change, for the run record (default: "
                                 "$PLUMB_APPROVED_BY, which the CI recipes set)"));
  ruled.push_back(sub.add_option("--plan-out", a.plan_out,
                                 "Also write the plan being applied here (after --limit)"));
}

// How long things may take, and how the run is shown.
void AddApplyTimingFlags(CLI::App& sub, GlobalOptions& g, plans::ApplyFlags& a,
                         RuledOptions& ruled) {
  ruled.push_back(sub.add_option("--reboot-timeout", a.reboot_timeout_s,
                                 "Seconds a reboot may take")->capture_default_str());
  ruled.push_back(sub.add_option("--task-timeout", a.task_timeout,
                                 "How long a firmware update's task may run on a BMC before the "
                                 "node fails (45m, 90s, 1h)")->capture_default_str());
  ruled.push_back(sub.add_option("--power-timeout", a.power_timeout,
                                 "How long a BMC reset may take to reach its power state")
                      ->capture_default_str());
  ruled.push_back(sub.add_option("--reboot-grace", a.reboot_grace_s,
                                 "On resume: seconds an unconfirmed reboot may still be on its way")
                      ->capture_default_str());
  ruled.push_back(sub.add_option("--poll-max-ms", a.poll_max_ms,
                                 "Longest wait between scheduler/boot polls")->capture_default_str());
  ruled.push_back(sub.add_option("--lock-ttl", a.lock_ttl,
                                 "How long the cluster lock lasts unless renewed (every ttl/5 while "
                                 "the run lives): another machine may take over a run whose "
                                 "holder went silent this long ago (10s to 24h)")
                      ->capture_default_str());
  ruled.push_back(AddFormat(sub, g.format, "text | json (JSON lines of events)", {"text", "json"}));
}

ApplyCommand AddApplyCommand(CLI::App& app, GlobalOptions& g, plans::ApplyFlags& a) {
  ApplyCommand c;
  c.sub = app.add_subcommand(
      "apply",
      "Apply a plan rolling-with-drain: per batch, lease and drain each node, change, reboot, "
      "verify, health-check, return to service; journaled and resumable.\n"
      "Exit: 0 done, 1 error/failed/halted (or the journal could not be written), 3 incomplete "
      "(paused by the window or an unreachable scheduler; stale or busy nodes), 130 interrupted.");
  AddApplySourceFlags(*c.sub, g, a, c.ruled);
  c.resume = AddApplyRunFlags(*c.sub, a, c.ruled);
  AddApplyRecordFlags(*c.sub, a, c.ruled);
  AddApplyTimingFlags(*c.sub, g, a, c.ruled);
  c.sub->footer(kApplyExamples);
  // Noted here, once this verb's parse is complete and before the caller's callback runs, so
  // what a test parses is what the binary sees.
  c.sub->parse_complete_callback([ruled = c.ruled, resume = c.resume, &a] {
    a.resume = resume->count() > 0;   // given with or without a RUN
    NoteGiven(ruled, a.given);
  });
  return c;
}

void NoteGiven(const RuledOptions& ruled, std::set<std::string>& given) {
  for (const CLI::Option* o : ruled)
    if (o->count() > 0) given.insert(o->get_name());
}

}  // namespace plumb::cli
