// plumb audit export --since DATE --format json|html [--out FILE]: per node, what was applied,
// when, from which commit, by whom, with the journal's hash-chain head and verdict. Read-only:
// it reads the journal and nothing else. Exit 0 written and verified; 1 an error, or a journal
// whose chain does not verify (the export is written all the same, saying so).
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "cmd/command.h"
#include "cmd/read_run.h"
#include "plans/core/clock.h"
#include "plans/store/journal.h"
#include "plans/store/store.h"
#include "plans/report/audit_export.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kAuditVerb = "audit export";
namespace {

struct AuditArgs {
  std::string since;
  std::string journal;
  std::string out;
  std::string format = "json";
};

int RunAuditExport(const AuditArgs& a) {
  auto fail = [](const Diagnostic& d) {
    std::fprintf(stderr, "plumb audit export: %s\n", d.ToString().c_str());
    return (ExitCodeFor(kAuditVerb, Outcome::kError));
  };
  if (Status s = plans::report::CheckSince(a.since); !s) return fail(s.error());
  auto chosen = plans::ChosenStore(a.journal);
  if (!chosen) return fail(chosen.error());
  const std::string store = *chosen;
  const std::string path = plans::RedactStore(store);   // what the export and messages show
  auto j = plans::OpenStore(store);
  if (!j) return fail(j.error());
  auto data = plans::report::CollectAudit(**j, a.since, path,
                                          plans::Rfc3339(std::chrono::system_clock::now()));
  if (!data) return fail(data.error());
  const std::string text = a.format == "html" ? plans::report::AuditToHtml(*data)
                                              : plans::report::AuditToJson(*data).dump(2) + "\n";
  if (Status st = WriteOutput(a.out, text); !st) return fail(st.error());
  size_t runs = data->runs.size();
  std::fprintf(stderr, "plumb audit export: %zu run(s) since %s; chain head %s (%lld entries)\n",
               runs, a.since.c_str(), data->chain.head.empty() ? "(empty)" : data->chain.head.c_str(),
               static_cast<long long>(data->chain.entries));
  if (!data->chain.ok()) {
    std::fprintf(stderr, "plumb audit export: the journal does NOT verify (%zu problem(s); the "
                         "export says so):\n", data->chain.problems.size());
    for (const std::string& p : data->chain.problems) std::fprintf(stderr, "  %s\n", p.c_str());
    return ExitCodeFor(kAuditVerb, Outcome::kNotVerified);
  }
  return ExitCodeFor(kAuditVerb, Outcome::kOk);
}

}  // namespace

void RegisterAudit(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* a = new AuditArgs;
  auto* audit = app.add_subcommand("audit", "Evidence for an auditor, from the journal");
  audit->require_subcommand(1);
  audit->footer(
      "Examples:\n"
      "  plumb audit export --since 2026-01-01 --format json --out audit.json\n"
      "  plumb audit export --since 2026-10-01 --format html --out audit.html");
  auto* sub = audit->add_subcommand(
      "export", "Per node: what was applied, when, from which commit, by whom; with the "
                "journal's hash-chain head");
  sub->add_option("--since", a->since, "Runs started on or after this day (YYYY-MM-DD, UTC) or "
                                       "RFC 3339 time")
      ->required();
  sub->add_option("--format", a->format, "json (plumb.audit/v1) or html (one self-contained page)")
      ->check(CLI::IsMember({"json", "html"}))
      ->capture_default_str();
  sub->add_option("--out", a->out, "Write here (atomically) instead of stdout");
  sub->add_option("--store,--journal", a->journal, "The store: a SQLite file or a postgresql:// URL without a password (that goes in $PLUMB_STORE or ~/.pgpass; default as for apply)");
  sub->footer(
      "The export carries the chain's head hash: keep it, and later `plumb history --verify\n"
      "--anchor HASH` proves the journal still holds what was exported. A journal whose chain\n"
      "does not verify is exported all the same, marked so (exit 1).\n\n"
      "Examples:\n"
      "  plumb audit export --since 2026-01-01 --format json --out audit.json\n"
      "  plumb audit export --since 2026-10-01 --format html --out audit.html\n"
      "  plumb audit export --since 2026-11-30T22:00:00Z --journal /var/lib/plumb/journal.db");
  (void)g;
  sub->callback([&run, a] { run = [a] { return RunAuditExport(*a); }; });
}

}  // namespace plumb::cmd
