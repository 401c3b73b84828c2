// plumb history [NODE]: what ran where, when, from which commit, with what outcome, from the
// journal's step records (oldest first).
#include <cstdio>

#include "cmd/command.h"
#include "plans/journal.h"

namespace plumb::cmd {
namespace {

struct HistoryArgs {
  std::string node;
  std::string journal;
  int limit = 200;
};

int RunHistory(const GlobalOptions& g, const HistoryArgs& a) {
  auto j = plans::OpenSqliteJournal(a.journal.empty() ? plans::DefaultJournalPath() : a.journal);
  if (!j) {
    std::fprintf(stderr, "plumb history: %s\n", j.error().ToString().c_str());
    return kExitError;
  }
  auto steps = (*j)->History(a.node, a.limit);
  if (!steps) {
    std::fprintf(stderr, "plumb history: %s\n", steps.error().ToString().c_str());
    return kExitError;
  }
  if (g.format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& s : *steps)
      out.push_back({{"run", s.run}, {"node", s.node}, {"step", s.step}, {"commit", s.commit},
                     {"started_at", s.started_at}, {"ended_at", s.ended_at},
                     {"duration_ms", s.duration_ms},
                     {"outcome", s.outcome.empty() ? "no outcome (interrupted)" : s.outcome},
                     {"error", s.error}, {"detail", s.detail}});
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  if (steps->empty()) std::printf("no history%s\n", a.node.empty() ? "" : (" for " + a.node).c_str());
  for (const auto& s : *steps)
    std::printf("%-24s %-22s %-10s %-12s %-28s %-11s %6lldms %s\n", s.started_at.c_str(),
                s.run.c_str(), s.node.c_str(), s.commit.substr(0, 12).c_str(), s.step.c_str(),
                s.outcome.empty() ? "(no outcome)" : s.outcome.c_str(),
                static_cast<long long>(s.duration_ms), s.error.c_str());
  return kExitOk;
}

}  // namespace

void RegisterHistory(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* a = new HistoryArgs;
  auto* sub = app.add_subcommand("history", "What plumb applied where, when, from which commit");
  sub->add_option("node", a->node, "Only this node");
  sub->add_option("--journal", a->journal, "Journal database (default as for apply)");
  sub->add_option("--limit", a->limit, "Most recent steps to show")->capture_default_str();
  sub->add_option("--format", g.format, "text | json")->check(CLI::IsMember({"text", "json"}));
  sub->callback([&run, &g, a] { run = [&g, a] { return RunHistory(g, *a); }; });
}

}  // namespace plumb::cmd
