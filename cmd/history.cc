// plumb history [NODE]: what ran where, when, from which commit, by whom, with what outcome,
// from the journal's step records (oldest first). --verify replays the journal's hash chain.
#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "cmd/command.h"
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

// "alice (CI github: bob), approved by carol, signed by ssh carol (SHA256:..)".
std::string WhoLine(const plans::RunWho& w) {
  std::string s = w.operator_user.empty() ? "(unknown operator)" : plans::OperatorText(w);
  if (!w.ci.empty()) s += fmt::format(" (CI {}: {})", w.ci, w.ci_actor.empty() ? "?" : w.ci_actor);
  s += w.approver.empty() ? ", no approver recorded" : ", approved by " + w.approver;
  if (!w.signer.empty()) s += "; commit " + w.signer;
  if (!w.author.empty()) s += "; author " + w.author;
  if (!w.committer.empty() && w.committer != w.author) s += ", committer " + w.committer;
  return s;
}

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

int RunHistory(const GlobalOptions& g, const HistoryArgs& a) {
  if (int rc = RefuseRetiredCountLimit(kHistoryVerb, a.old_limit); rc >= 0) return rc;
  auto chosen = plans::ChosenStore(a.journal);
  if (!chosen) {
    HistoryErr(chosen.error().ToString());
    return ExitCodeFor(kHistoryVerb, Outcome::kError);
  }
  const std::string store = *chosen;
  const std::string path = plans::RedactStore(store);   // what messages show
  auto j = plans::OpenStore(store);
  if (!j) {
    HistoryErr(j.error().ToString());
    return ExitCodeFor(kHistoryVerb, Outcome::kError);
  }
  if (a.verify) return Verify(**j, a, path);
  if (!a.node.empty()) {
    // A typo must not read as "nothing ever happened to it".
    auto known = (*j)->KnowsNode(a.node);
    if (!known) {
      HistoryErr(known.error().ToString());
      return ExitCodeFor(kHistoryVerb, Outcome::kError);
    }
    if (!*known) {
      HistoryErr(fmt::format("error: no run in {} touched a node named '{}'", path, a.node));
      std::fprintf(stderr, "hint: plumb history (no node) lists every node's steps; plumb runs "
                           "lists the runs\n");
      return ExitCodeFor(kHistoryVerb, Outcome::kError);
    }
  }
  auto steps = (*j)->History(a.node, a.limit);
  if (!steps) {
    HistoryErr(steps.error().ToString());
    return ExitCodeFor(kHistoryVerb, Outcome::kError);
  }
  std::map<std::string, plans::RunRecord> runs;   // who stands behind each run shown
  for (const auto& s : *steps)
    if (!runs.count(s.run))
      if (auto r = (*j)->GetRun(s.run); r && r->has_value()) runs[s.run] = **r;
  if (g.format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& s : *steps) {
      const plans::RunRecord* r = runs.count(s.run) ? &runs[s.run] : nullptr;
      out.push_back({{"run", s.run}, {"node", s.node}, {"step", s.step}, {"commit", s.commit},
                     {"plan_commit", r && !r->plan_commit.empty() ? r->plan_commit : s.commit},
                     {"started_at", s.started_at}, {"ended_at", s.ended_at},
                     {"duration_ms", s.duration_ms},
                     {"outcome", s.outcome == plans::StepState::kNone ? std::string("no outcome (interrupted)")
                                                          : std::string(plans::Name(s.outcome))},
                     {"error", s.error}, {"detail", s.detail},
                     {"who", r ? r->who.ToJson() : nlohmann::json::object()}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return ExitCodeFor(kHistoryVerb, Outcome::kOk);
  }
  if (steps->empty()) std::printf("no history\n");
  std::string shown_run;
  for (const auto& s : *steps) {
    if (s.run != shown_run) {   // each run's who, once, above its steps
      shown_run = s.run;
      if (auto it = runs.find(s.run); it != runs.end()) {
        const plans::RunRecord& r = it->second;
        std::printf("run %s  commit %s%s  by %s\n", r.id.c_str(), r.commit.substr(0, 12).c_str(),
                    !r.plan_commit.empty() && r.plan_commit != r.commit
                        ? (" (plan reviewed at " + r.plan_commit.substr(0, 12) + ")").c_str()
                        : "",
                    WhoLine(r.who).c_str());
      }
    }
    std::printf("  %-24s %-10s %-12s %-28s %-11s %6lldms %s\n", s.started_at.c_str(),
                s.node.c_str(), s.commit.substr(0, 12).c_str(), s.step.c_str(),
                s.outcome == plans::StepState::kNone ? "(no outcome)"
                                                     : std::string(plans::Name(s.outcome)).c_str(),
                static_cast<long long>(s.duration_ms), s.error.c_str());
  }
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
