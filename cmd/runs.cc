// plumb runs: the apply runs in the journal, newest first (text or JSON). Also lists the nodes
// the scheduler shows drained by plumb for a run the journal does not know (a lost journal),
// with --scheduler.
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "cmd/command.h"
#include "plans/store/journal.h"
#include "plans/plan/plan_json.h"
#include "plans/store/store.h"
#include "plans/core/process_identity.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kRunsVerb = "runs";
namespace {

// What is known of a run the journal says is running. Its process may have stopped without
// recording its end (a crash, a store that stopped answering): on this host its pid tells; on
// any host its cluster lock does (a live run renews it, a stopped one leaves it to expire).
struct RunLiveness {
  bool live = false;   ///< as far as the store can tell, a process is carrying it now
  std::string state;   ///< what `plumb runs` shows
};

RunLiveness Liveness(const plans::RunRecord& r, plans::Journal& j) {
  if (r.outcome != plans::RunState::kRunning) return {false, std::string(plans::Name(r.outcome))};
  const std::string resume = "plumb apply --resume " + r.id;
  if (r.owner_host == plans::HostName() && !plans::OwnerAlive(r.owner_pid, {}))
    return {false, "running (owner gone: " + resume + ")"};
  auto lock = j.LockOfRun(r.id);
  if (!lock) return {true, "running"};   // cannot tell: as recorded
  if (!lock->has_value())
    return {false, "running? (no process holds its lock: it stopped without recording its end; " + resume + ")"};
  auto now = j.StoreNow();
  if (now && (*lock)->expires < plans::Rfc3339(*now))
    return {false, fmt::format("running? (its lock expired at {}: {} pid {} stopped renewing it; {} takes it over)",
                               (*lock)->expires, (*lock)->owner_host, (*lock)->owner_pid, resume)};
  return {true, "running"};
}

// The plan's nodes the journal has no row for. A live run has not reached them yet; a stopped
// one never started them (or could not record that it did not).
std::vector<std::string> NodesWithoutRow(const plans::RunRecord& r, const std::vector<plans::NodeRecord>& rows) {
  std::set<std::string> have;
  for (const auto& n : rows) have.insert(n.node);
  std::vector<std::string> out;
  auto j = nlohmann::json::parse(r.plan_json, nullptr, false);
  if (j.is_discarded()) return out;
  auto plan = plans::PlanFromJson(j);
  if (!plan) return out;
  for (const auto& b : plan->batches)   // the nodes the run was to roll (not a plan's checks only)
    for (const auto& n : b.nodes)
      if (!have.count(n)) out.push_back(n);
  return out;
}

struct RunsArgs {
  std::string journal;
  int limit = 20;
  std::string old_limit;   ///< --limit: refused with a pointer to --last
  std::string run;   // details of one run
};

int RunRuns(const GlobalOptions& g, const RunsArgs& a) {
  if (int rc = RefuseRetiredCountLimit(kRunsVerb, a.old_limit); rc >= 0) return rc;
  auto chosen = plans::ChosenStore(a.journal);
  if (!chosen) {
    std::fprintf(stderr, "plumb runs: %s\n", chosen.error().ToString().c_str());
    return ExitCodeFor(kRunsVerb, Outcome::kError);
  }
  auto j = plans::OpenStore(*chosen);
  if (!j) {
    std::fprintf(stderr, "plumb runs: %s\n", j.error().ToString().c_str());
    return ExitCodeFor(kRunsVerb, Outcome::kError);
  }
  if (!a.run.empty()) {
    auto r = (*j)->GetRun(a.run);
    auto nodes = (*j)->Nodes(a.run);
    if (!r || !nodes || !r->has_value()) {
      std::fprintf(stderr, "plumb runs: no run %s\n", a.run.c_str());
      return ExitCodeFor(kRunsVerb, Outcome::kError);
    }
    const plans::RunRecord& rr = **r;
    const RunLiveness live = Liveness(rr, **j);
    const std::vector<std::string> unrecorded = NodesWithoutRow(rr, *nodes);
    // A node the journal shows mid-step in a run nobody carries on: its last record stands,
    // whether that step ended is not known.
    auto known = [&](const plans::NodeRecord& n) -> std::string {
      if (n.status != plans::NodeState::kRunning || live.live) return {};
      // Its last step as the journal has it: an intent without an outcome is a step that was
      // under way when the process stopped (or could no longer write).
      std::string step = n.last_step;
      bool open = false;
      if (auto steps = (*j)->Steps(rr.id, n.node); steps && !steps->empty()) {
        step = steps->back().step;
        open = steps->back().outcome == plans::StepState::kNone;
      }
      if (open)
        return "its process stopped during " + step +
               " (its intent is recorded, not how it ended); --resume re-checks it";
      return "its process stopped" + (step.empty() ? std::string() : " after " + step) +
             " without recording where the node ended; --resume re-checks it";
    };
    const std::string no_row = live.live ? "not reached yet"
                                         : "no record: not started by this run (or its process could not record it)";
    if (g.format == "json") {
      nlohmann::json out = {{"id", rr.id}, {"cluster", rr.cluster}, {"commit", rr.commit},
                            {"plan_commit", rr.plan_commit.empty() ? rr.commit : rr.plan_commit},
                            {"who", rr.who.ToJson()},
                            {"plan_digest", rr.plan_digest}, {"started_at", rr.started_at},
                            {"ended_at", rr.ended_at}, {"outcome", rr.outcome},
                            {"state", live.state},
                            {"summary", rr.summary}, {"owner", fmt::format("{}:{}", rr.owner_host, rr.owner_pid)},
                            {"nodes", nlohmann::json::array()}};
      for (const auto& n : *nodes)
        out["nodes"].push_back({{"node", n.node}, {"status", n.status}, {"last_step", n.last_step},
                                {"error", n.error}, {"admin_drained", n.admin_drained},
                                {"waiting_for", n.note}, {"known", known(n)},
                                {"started_at", n.started_at}, {"ended_at", n.ended_at}});
      out["nodes_without_record"] = unrecorded;
      std::printf("%s\n", out.dump(2).c_str());
      return ExitCodeFor(kRunsVerb, Outcome::kOk);
    }
    std::printf("run %s  cluster %s  commit %s\n  %s .. %s  %s  (%s:%lld)\n  %s\n", rr.id.c_str(),
                rr.cluster.c_str(), rr.commit.c_str(), rr.started_at.c_str(),
                rr.ended_at.empty() ? "(running)" : rr.ended_at.c_str(), live.state.c_str(),
                rr.owner_host.c_str(), static_cast<long long>(rr.owner_pid), rr.summary.c_str());
    const plans::RunWho& w = rr.who;
    if (!rr.plan_commit.empty() && rr.plan_commit != rr.commit)
      std::printf("  plan reviewed at %s, applied at %s (same desired state)\n",
                  rr.plan_commit.c_str(), rr.commit.c_str());
    std::printf("  operator %s%s\n  approved by %s\n  author %s, committer %s\n  commit %s\n",
                w.operator_user.empty() ? "(not recorded)" : plans::OperatorText(w).c_str(),
                w.ci.empty() ? ""
                             : fmt::format(", CI {} triggered by {}{}", w.ci, w.ci_actor,
                                           w.ci_job.empty() ? "" : " (" + w.ci_job + ")")
                                   .c_str(),
                w.approver.empty() ? "(none recorded)" : w.approver.c_str(),
                w.author.empty() ? "?" : w.author.c_str(),
                w.committer.empty() ? "?" : w.committer.c_str(),
                w.signer.empty() ? "(signature not recorded)" : w.signer.c_str());
    for (const auto& n : *nodes) {
      // A running node shows its current step and what it waits for (jobs, a reboot).
      std::string what = n.status == plans::NodeState::kRunning && !n.note.empty() ? n.note : n.error;
      if (const std::string k = known(n); !k.empty()) what = what.empty() ? k : what + "; " + k;
      std::printf("  %-12s %-12s %-22s %s%s\n", n.node.c_str(), std::string(plans::Name(n.status)).c_str(),
                  n.last_step.c_str(), what.c_str(),
                  n.admin_drained ? (" [admin-drained: " + n.admin_reason + "]").c_str() : "");
    }
    for (const std::string& n : unrecorded) std::printf("  %-12s %-12s %-22s %s\n", n.c_str(), "-", "", no_row.c_str());
    return ExitCodeFor(kRunsVerb, Outcome::kOk);
  }
  auto runs = (*j)->ListRuns(a.limit);
  if (!runs) {
    std::fprintf(stderr, "plumb runs: %s\n", runs.error().ToString().c_str());
    return ExitCodeFor(kRunsVerb, Outcome::kError);
  }
  if (g.format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : *runs)
      out.push_back({{"id", r.id}, {"cluster", r.cluster}, {"commit", r.commit},
                     {"plan_commit", r.plan_commit.empty() ? r.commit : r.plan_commit},
                     {"who", r.who.ToJson()},
                     {"started_at", r.started_at}, {"ended_at", r.ended_at},
                     {"outcome", r.outcome}, {"state", Liveness(r, **j).state}, {"summary", r.summary}});
    std::printf("%s\n", out.dump(2).c_str());
    return ExitCodeFor(kRunsVerb, Outcome::kOk);
  }
  if (runs->empty()) std::printf("no runs in the journal\n");
  for (const auto& r : *runs) {
    // By whom: the approver when one was recorded, else who ran it (and the CI's actor).
    std::string by = r.who.operator_user.empty() ? "?" : r.who.operator_user;
    if (!r.who.login_user.empty()) by = r.who.login_user + "(" + by + ")";   // sudo: alice(root)
    if (!r.who.ci_actor.empty()) by = r.who.ci + ":" + r.who.ci_actor;
    if (!r.who.approver.empty()) by += " ok:" + r.who.approver;
    std::printf("%-22s %-10s %-12s %-24s %-20s %s\n", r.id.c_str(), r.cluster.c_str(),
                r.commit.substr(0, 12).c_str(), r.started_at.c_str(), by.c_str(),
                (Liveness(r, **j).state + (r.summary.empty() ? "" : ": " + r.summary)).c_str());
  }
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
