// history, runs and audit export over the store (plans/report/journal_commands.h).
#include "plans/report/journal_commands.h"

#include <memory>

#include <fmt/format.h>

#include "plans/core/command_output.h"
#include "plans/report/audit_export.h"
#include "plans/report/journal_views.h"
#include "plans/store/journal.h"
#include "plans/store/run_liveness.h"
#include "plans/store/store.h"
#include "schemas/exit_codes.h"

namespace plumb::plans::report {

namespace {

// The store --store chooses, open, and how messages name it (no password).
struct ChosenJournal {
  std::unique_ptr<Journal> journal;
  std::string shown;
};

Result<ChosenJournal> OpenChosenJournal(const std::string& flag) {
  auto chosen = ChosenStore(flag);
  if (!chosen) return chosen.error();
  auto j = OpenStore(*chosen);
  if (!j) return j.error();
  return ChosenJournal{std::move(*j), RedactStore(*chosen)};
}

// "plumb <verb>: <message>" on `err`, and the verb's error code.
int JournalVerbFailed(std::string_view verb, const std::string& message, std::ostream& err) {
  err << "plumb " << verb << ": " << message << "\n";
  return ExitCodeFor(verb, Outcome::kError);
}

int VerifyHistory(Journal& j, const HistoryRequest& r, const std::string& shown, std::ostream& out,
                  std::ostream& err) {
  auto v = j.VerifyChain(r.anchor);
  if (!v) return JournalVerbFailed("history", v.error().ToString(), err);
  out << fmt::format("journal {}: {} chain entries{}, head {}\n", shown, v->entries,
                     v->adopted ? fmt::format(" ({} rows taken in as they were when the chain began)",
                                              v->adopted)
                                : "",
                     v->head.empty() ? "(empty)" : v->head);
  if (v->ok()) {
    out << "verified: every run, step, node and facts row matches its hash chain"
        << (r.anchor.empty() ? "" : ", and the recorded head is in it") << "\n";
    return ExitCodeFor("history", Outcome::kOk);
  }
  out << fmt::format("NOT VERIFIED: {} problem(s):\n", v->problems.size());
  for (const std::string& p : v->problems) out << "  " << p << "\n";
  return ExitCodeFor("history", Outcome::kNotVerified);
}

// A typo must not read as "nothing ever happened to it": -1 when `node` is known (or none).
int RefuseUnknownNode(Journal& j, const std::string& node, const std::string& shown,
                      std::ostream& err) {
  if (node.empty()) return -1;
  auto known = j.KnowsNode(node);
  if (!known) return JournalVerbFailed("history", known.error().ToString(), err);
  if (*known) return -1;
  err << fmt::format("plumb history: error: no run in {} touched a node named '{}'\n", shown, node)
      << "hint: plumb history (no node) lists every node's steps; plumb runs lists the runs\n";
  return ExitCodeFor("history", Outcome::kError);
}

int ShowOneRun(Journal& j, const RunsRequest& r, std::ostream& out, std::ostream& err) {
  auto run = j.GetRun(r.run);
  auto nodes = j.Nodes(r.run);
  if (!run || !nodes || !run->has_value()) return JournalVerbFailed("runs", "no run " + r.run, err);
  RunDetail d;
  d.run = **run;
  d.live = LivenessOf(d.run, j);
  d.nodes = std::move(*nodes);
  for (const NodeRecord& n : d.nodes) d.known.push_back(StoppedNodeNote(d.run, n, d.live.live, j));
  d.unrecorded = NodesWithoutRow(d.run, d.nodes);
  out << (r.format == "json" ? RunDetailJson(d) : RunDetailText(d));
  return ExitCodeFor("runs", Outcome::kOk);
}

}  // namespace

int RunHistory(const HistoryRequest& r, std::ostream& out, std::ostream& err) {
  auto j = OpenChosenJournal(r.store);
  if (!j) return JournalVerbFailed("history", j.error().ToString(), err);
  Journal& journal = *j->journal;
  if (r.verify) return VerifyHistory(journal, r, j->shown, out, err);
  if (int rc = RefuseUnknownNode(journal, r.node, j->shown, err); rc >= 0) return rc;
  auto steps = journal.History(r.node, r.last);
  if (!steps) return JournalVerbFailed("history", steps.error().ToString(), err);
  HistoryView h;
  h.steps = std::move(*steps);
  for (const auto& s : h.steps)   // who stands behind each run shown
    if (!h.runs.count(s.run))
      if (auto run = journal.GetRun(s.run); run && run->has_value()) h.runs[s.run] = **run;
  out << (r.format == "json" ? HistoryJson(h) : HistoryText(h));
  return ExitCodeFor("history", Outcome::kOk);
}

int RunRuns(const RunsRequest& r, std::ostream& out, std::ostream& err) {
  auto j = OpenChosenJournal(r.store);
  if (!j) return JournalVerbFailed("runs", j.error().ToString(), err);
  Journal& journal = *j->journal;
  if (!r.run.empty()) return ShowOneRun(journal, r, out, err);
  auto runs = journal.ListRuns(r.last);
  if (!runs) return JournalVerbFailed("runs", runs.error().ToString(), err);
  std::vector<RunRow> rows;
  for (RunRecord& run : *runs) {
    std::string state = LivenessOf(run, journal).state;
    rows.push_back({std::move(run), std::move(state)});
  }
  out << (r.format == "json" ? RunsJson(rows) : RunsText(rows));
  return ExitCodeFor("runs", Outcome::kOk);
}

int RunAuditExport(const AuditRequest& r, std::ostream& out, std::ostream& err) {
  constexpr std::string_view kVerb = "audit export";
  if (Status s = CheckSince(r.since); !s) return JournalVerbFailed(kVerb, s.error().ToString(), err);
  auto j = OpenChosenJournal(r.store);
  if (!j) return JournalVerbFailed(kVerb, j.error().ToString(), err);
  auto data = CollectAudit(*j->journal, r.since, j->shown, r.now);
  if (!data) return JournalVerbFailed(kVerb, data.error().ToString(), err);
  const std::string text = r.format == "html" ? AuditToHtml(*data) : AuditToJson(*data).dump(2) + "\n";
  Status st = WriteOutputTo(r.file, out, [&text](std::ostream& o) { o.write(text.data(), text.size()); });
  if (!st) return JournalVerbFailed(kVerb, st.error().ToString(), err);
  err << fmt::format("plumb audit export: {} run(s) since {}; chain head {} ({} entries)\n",
                     data->runs.size(), r.since, data->chain.head.empty() ? "(empty)" : data->chain.head,
                     data->chain.entries);
  if (!data->chain.ok()) {
    err << fmt::format("plumb audit export: the journal does NOT verify ({} problem(s); the export "
                       "says so):\n", data->chain.problems.size());
    for (const std::string& p : data->chain.problems) err << "  " << p << "\n";
    return ExitCodeFor(kVerb, Outcome::kNotVerified);
  }
  return ExitCodeFor(kVerb, Outcome::kOk);
}

}  // namespace plumb::plans::report
