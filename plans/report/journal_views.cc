#include "plans/report/journal_views.h"

#include <fmt/format.h>

namespace plumb::plans::report {
namespace {

std::string StepOutcomeName(StepState s) {
  return s == StepState::kNone ? std::string("no outcome (interrupted)") : std::string(Name(s));
}

// By whom: the approver when one was recorded, else who ran it (and the CI's actor).
std::string RunBy(const RunWho& w) {
  std::string by = w.operator_user.empty() ? "?" : w.operator_user;
  if (!w.login_user.empty()) by = w.login_user + "(" + by + ")";   // sudo: alice(root)
  if (!w.ci_actor.empty()) by = w.ci + ":" + w.ci_actor;
  if (!w.approver.empty()) by += " ok:" + w.approver;
  return by;
}

std::string RunWhoText(const RunRecord& rr) {
  const RunWho& w = rr.who;
  std::string s;
  if (!rr.plan_commit.empty() && rr.plan_commit != rr.commit)
    s += fmt::format("  plan reviewed at {}, applied at {} (same desired state)\n", rr.plan_commit,
                     rr.commit);
  const std::string ci = w.ci.empty() ? ""
                                      : fmt::format(", CI {} triggered by {}{}", w.ci, w.ci_actor,
                                                    w.ci_job.empty() ? "" : " (" + w.ci_job + ")");
  s += fmt::format("  operator {}{}\n  approved by {}\n  author {}, committer {}\n  commit {}\n",
                   w.operator_user.empty() ? "(not recorded)" : OperatorText(w), ci,
                   w.approver.empty() ? "(none recorded)" : w.approver,
                   w.author.empty() ? "?" : w.author, w.committer.empty() ? "?" : w.committer,
                   w.signer.empty() ? "(signature not recorded)" : w.signer);
  return s;
}

}  // namespace

std::string WhoLine(const RunWho& w) {
  std::string s = w.operator_user.empty() ? "(unknown operator)" : OperatorText(w);
  if (!w.ci.empty()) s += fmt::format(" (CI {}: {})", w.ci, w.ci_actor.empty() ? "?" : w.ci_actor);
  s += w.approver.empty() ? ", no approver recorded" : ", approved by " + w.approver;
  if (!w.signer.empty()) s += "; commit " + w.signer;
  if (!w.author.empty()) s += "; author " + w.author;
  if (!w.committer.empty() && w.committer != w.author) s += ", committer " + w.committer;
  return s;
}

std::string RunsText(const std::vector<RunRow>& rows) {
  std::string out = rows.empty() ? "no runs in the journal\n" : "";
  for (const RunRow& row : rows) {
    const RunRecord& r = row.run;
    out += fmt::format("{:<22} {:<10} {:<12} {:<24} {:<20} {}\n", r.id, r.cluster,
                       r.commit.substr(0, 12), r.started_at, RunBy(r.who),
                       row.state + (r.summary.empty() ? "" : ": " + r.summary));
  }
  return out;
}

std::string RunsJson(const std::vector<RunRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const RunRow& row : rows) {
    const RunRecord& r = row.run;
    out.push_back({{"id", r.id}, {"cluster", r.cluster}, {"commit", r.commit},
                   {"plan_commit", r.plan_commit.empty() ? r.commit : r.plan_commit},
                   {"who", r.who.ToJson()},
                   {"started_at", r.started_at}, {"ended_at", r.ended_at},
                   {"outcome", r.outcome}, {"state", row.state}, {"summary", r.summary}});
  }
  return out.dump(2) + "\n";
}

std::string RunDetailText(const RunDetail& d) {
  const RunRecord& rr = d.run;
  std::string out = fmt::format("run {}  cluster {}  commit {}\n  {} .. {}  {}  ({}:{})\n  {}\n",
                                rr.id, rr.cluster, rr.commit, rr.started_at,
                                rr.ended_at.empty() ? "(running)" : rr.ended_at, d.live.state,
                                rr.owner_host, rr.owner_pid, rr.summary);
  out += RunWhoText(rr);
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    const NodeRecord& n = d.nodes[i];
    // A running node shows its current step and what it waits for (jobs, a reboot).
    std::string what = n.status == NodeState::kRunning && !n.note.empty() ? n.note : n.error;
    if (const std::string& k = d.known[i]; !k.empty()) what = what.empty() ? k : what + "; " + k;
    out += fmt::format("  {:<12} {:<12} {:<22} {}{}\n", n.node, Name(n.status), n.last_step, what,
                       n.admin_drained ? " [admin-drained: " + n.admin_reason + "]" : "");
  }
  const std::string no_row = d.live.live ? "not reached yet"
                                         : "no record: not started by this run (or its process could not record it)";
  for (const std::string& n : d.unrecorded)
    out += fmt::format("  {:<12} {:<12} {:<22} {}\n", n, "-", "", no_row);
  return out;
}

std::string RunDetailJson(const RunDetail& d) {
  const RunRecord& rr = d.run;
  nlohmann::json out = {{"id", rr.id}, {"cluster", rr.cluster}, {"commit", rr.commit},
                        {"plan_commit", rr.plan_commit.empty() ? rr.commit : rr.plan_commit},
                        {"who", rr.who.ToJson()},
                        {"plan_digest", rr.plan_digest}, {"started_at", rr.started_at},
                        {"ended_at", rr.ended_at}, {"outcome", rr.outcome},
                        {"state", d.live.state},
                        {"summary", rr.summary}, {"owner", fmt::format("{}:{}", rr.owner_host, rr.owner_pid)},
                        {"nodes", nlohmann::json::array()}};
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    const NodeRecord& n = d.nodes[i];
    out["nodes"].push_back({{"node", n.node}, {"status", n.status}, {"last_step", n.last_step},
                            {"error", n.error}, {"admin_drained", n.admin_drained},
                            {"waiting_for", n.note}, {"known", d.known[i]},
                            {"started_at", n.started_at}, {"ended_at", n.ended_at}});
  }
  out["nodes_without_record"] = d.unrecorded;
  return out.dump(2) + "\n";
}

std::string HistoryText(const HistoryView& h) {
  std::string out = h.steps.empty() ? "no history\n" : "";
  std::string shown_run;
  for (const StepRecord& s : h.steps) {
    if (s.run != shown_run) {   // each run's who, once, above its steps
      shown_run = s.run;
      if (auto it = h.runs.find(s.run); it != h.runs.end()) {
        const RunRecord& r = it->second;
        out += fmt::format("run {}  commit {}{}  by {}\n", r.id, r.commit.substr(0, 12),
                           !r.plan_commit.empty() && r.plan_commit != r.commit
                               ? " (plan reviewed at " + r.plan_commit.substr(0, 12) + ")"
                               : "",
                           WhoLine(r.who));
      }
    }
    out += fmt::format("  {:<24} {:<10} {:<12} {:<28} {:<11} {:>6}ms {}\n", s.started_at, s.node,
                       s.commit.substr(0, 12), s.step,
                       s.outcome == StepState::kNone ? "(no outcome)" : std::string(Name(s.outcome)),
                       s.duration_ms, s.error);
  }
  return out;
}

std::string HistoryJson(const HistoryView& h) {
  nlohmann::json out = nlohmann::json::array();
  for (const StepRecord& s : h.steps) {
    auto it = h.runs.find(s.run);
    const RunRecord* r = it != h.runs.end() ? &it->second : nullptr;
    out.push_back({{"run", s.run}, {"node", s.node}, {"step", s.step}, {"commit", s.commit},
                   {"plan_commit", r && !r->plan_commit.empty() ? r->plan_commit : s.commit},
                   {"started_at", s.started_at}, {"ended_at", s.ended_at},
                   {"duration_ms", s.duration_ms}, {"outcome", StepOutcomeName(s.outcome)},
                   {"error", s.error}, {"detail", s.detail},
                   {"who", r ? r->who.ToJson() : nlohmann::json::object()}});
  }
  return out.dump(2) + "\n";
}

}  // namespace plumb::plans::report
