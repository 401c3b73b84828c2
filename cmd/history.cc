// plumb history [NODE]: what ran where, when, from which commit, by whom, with what outcome,
// from the journal's step records (oldest first). --verify replays the journal's hash chain.
#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "cmd/command.h"
#include "plans/report/journal_views.h"
#include "plans/store/journal.h"
#include "plans/store/store.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kHistoryVerb = "history";
namespace {

struct HistoryArgs {
  std::string node;
  std::string journal;
  int limit = 200;
  std::string old_limit;   ///< --limit: refused with a pointer to --last
  bool verify = false;
  std::string anchor;
};

void HistoryErr(const std::string& s) { std::fprintf(stderr, "plumb history: %s\n", s.c_str()); }

int Verify(plans::Journal& j, const HistoryArgs& a, const std::string& path) {
  auto r = j.VerifyChain(a.anchor);
  if (!r) {
    HistoryErr(r.error().ToString());
    return ExitCodeFor(kHistoryVerb, Outcome::kError);
  }
  std::printf("journal %s: %lld chain entries%s, head %s\n", path.c_str(),
              static_cast<long long>(r->entries),
              r->adopted ? fmt::format(" ({} rows taken in as they were when the chain began)",
                                       r->adopted).c_str()
                         : "",
              r->head.empty() ? "(empty)" : r->head.c_str());
  if (r->ok()) {
    std::printf("verified: every run, step, node and facts row matches its hash chain%s\n",
                a.anchor.empty() ? "" : ", and the recorded head is in it");
    return ExitCodeFor(kHistoryVerb, Outcome::kOk);
  }
  std::printf("NOT VERIFIED: %zu problem(s):\n", r->problems.size());
  for (const std::string& p : r->problems) std::printf("  %s\n", p.c_str());
  return ExitCodeFor(kHistoryVerb, Outcome::kNotVerified);
}

int HistoryFailed(const std::string& message) {
  HistoryErr(message);
  return ExitCodeFor(kHistoryVerb, Outcome::kError);
}

// A typo must not read as "nothing ever happened to it": -1 when `node` is known.
int RefuseUnknownNode(plans::Journal& j, const std::string& node, const std::string& path) {
  if (node.empty()) return -1;
  auto known = j.KnowsNode(node);
  if (!known) return HistoryFailed(known.error().ToString());
  if (*known) return -1;
  HistoryErr(fmt::format("error: no run in {} touched a node named '{}'", path, node));
  std::fprintf(stderr, "hint: plumb history (no node) lists every node's steps; plumb runs "
                       "lists the runs\n");
  return ExitCodeFor(kHistoryVerb, Outcome::kError);
}

int RunHistory(const GlobalOptions& g, const HistoryArgs& a) {
  if (int rc = RefuseRetiredCountLimit(kHistoryVerb, a.old_limit); rc >= 0) return rc;
  auto chosen = plans::ChosenStore(a.journal);
  if (!chosen) return HistoryFailed(chosen.error().ToString());
  const std::string store = *chosen;
  const std::string path = plans::RedactStore(store);   // what messages show
  auto j = plans::OpenStore(store);
  if (!j) return HistoryFailed(j.error().ToString());
  if (a.verify) return Verify(**j, a, path);
  if (int rc = RefuseUnknownNode(**j, a.node, path); rc >= 0) return rc;
  auto steps = (*j)->History(a.node, a.limit);
  if (!steps) return HistoryFailed(steps.error().ToString());
  plans::report::HistoryView h;
  h.steps = std::move(*steps);
  for (const auto& s : h.steps)   // who stands behind each run shown
    if (!h.runs.count(s.run))
      if (auto r = (*j)->GetRun(s.run); r && r->has_value()) h.runs[s.run] = **r;
  const std::string out =
      g.format == "json" ? plans::report::HistoryJson(h) : plans::report::HistoryText(h);
  std::fputs(out.c_str(), stdout);
  return ExitCodeFor(kHistoryVerb, Outcome::kOk);
}

}  // namespace

void RegisterHistory(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* a = new HistoryArgs;
  auto* sub = app.add_subcommand(
      "history", "What plumb applied where, when, from which commit, by whom; --verify checks "
                 "the journal's hash chain");
  sub->add_option("node", a->node, "Only this node (an error if no run touched it)");
  sub->add_option("--store,--journal", a->journal, "The store: a SQLite file or a postgresql:// URL without a password (that goes in $PLUMB_STORE or ~/.pgpass; default as for apply)");
  sub->add_option("--last", a->limit, "How many steps, the latest")->capture_default_str();
  // --limit takes node patterns everywhere else; here it used to count steps.
  AddRetiredCountLimit(*sub, a->old_limit);
  sub->add_flag("--verify", a->verify,
                "Replay the hash chain: name every edited, deleted, inserted or reordered row "
                "(exit 1 if any)");
  sub->add_option("--anchor", a->anchor,
                  "With --verify: a head hash recorded earlier (plumb audit export's chain.head); "
                  "it must still be in the chain");
  sub->add_option("--format", g.format, "text | json")->check(CLI::IsMember({"text", "json"}));
  sub->footer(
      "Every journal write is also appended to a hash chain (each entry holds the previous\n"
      "entry's hash). --verify replays it and compares each row with it. Someone who can\n"
      "write the journal can rewrite the whole chain; keep its head elsewhere (an audit\n"
      "export, the CI log) and check it with --anchor.\n\n"
      "Examples:\n"
      "  plumb history gpu001                        every step on gpu001, with who and which commit\n"
      "  plumb history --format json --last 1000\n"
      "  plumb history --verify                      exit 1 and the rows, if anything was edited\n"
      "  plumb history --verify --anchor sha256:...  and the head an export recorded is still there");
  sub->callback([&run, &g, a, sub] {
    run = [&g, a] {
      if (!a->anchor.empty() && !a->verify) {
        HistoryErr("error: --anchor checks a chain head: give it with --verify");
        return (ExitCodeFor(kHistoryVerb, Outcome::kError));
      }
      if (a->verify && !a->node.empty()) {
        HistoryErr("error: --verify checks the whole journal; it takes no node");
        return (ExitCodeFor(kHistoryVerb, Outcome::kError));
      }
      return RunHistory(g, *a);
    };
    (void)sub;
  });
}

}  // namespace plumb::cmd
