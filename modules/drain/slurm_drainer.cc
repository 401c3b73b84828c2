#include "modules/drain/slurm_drainer.h"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "modules/drain/slurm_parse.h"

namespace plumb::modules {

Result<transport::CommandOutput> SlurmDrainer::Run(const std::string& cmd) {
  return shell_.Run(cmd, timeout_);
}

namespace {

// Slurm's words for "the controller cannot be reached": a call that failed this way did not
// fail because of the node, and must not count against it.
bool ControllerUnreachable(std::string_view text) {
  for (std::string_view w : {"Unable to contact slurm controller", "Socket timed out",
                             "Zero Bytes were transmitted", "Connection refused",
                             "Slurm backup controller in standby mode", "slurm_load_node error",
                             "slurm_load_jobs error", "Communication connection failure"})
    if (text.find(w) != std::string_view::npos) return true;
  return false;
}

Diagnostic Unavailable(const std::string& what) {
  return Diagnostic::Error(std::string(kSchedulerUnavailable), "slurm unavailable: " + what, {}, {},
                           "is slurmctld up? (scontrol ping)");
}

// A command that could not run at all (timeout, no such program) or that says the
// controller is unreachable.
std::optional<Diagnostic> UnavailableFrom(const Result<transport::CommandOutput>& r,
                                          const std::string& what) {
  if (!r) return Unavailable(fmt::format("{}: {}", what, r.error().message));
  if (r->exit_status != 0 && ControllerUnreachable(r->err + r->out)) {
    std::string e = r->err.empty() ? r->out : r->err;
    while (!e.empty() && e.back() == '\n') e.pop_back();
    return Unavailable(fmt::format("{}: {}", what, e));
  }
  return std::nullopt;
}

}  // namespace

Result<std::map<std::string, SchedulerNode>> SlurmDrainer::Query(
    const std::vector<std::string>& want) {
  Result<std::map<std::string, SchedulerNode>> nodes =
      Diagnostic::Error("slurm.query", "no node listing");
  auto js = Run("sinfo --json");
  if (auto u = UnavailableFrom(js, "sinfo --json")) return *u;
  if (js->exit_status == 0) {
    nodes = slurm::ParseSinfoJson(js->out);
    if (!nodes && nodes.error().code == kSchedulerUnavailable) return nodes.error();
  }
  if (!nodes) {
    auto sc = Run("scontrol show node -o");
    if (auto u = UnavailableFrom(sc, "scontrol show node")) return *u;
    if (sc->exit_status != 0)
      return Unavailable(fmt::format("scontrol show node exited {}: {}", sc->exit_status, sc->err));
    nodes = slurm::ParseScontrolNodes(sc->out);
    if (!nodes) return nodes.error();
  }
  // A cluster plumb asks about has nodes: an empty listing is a controller that answered
  // without its state (seen with slurmctld restarting), not "no node is out".
  if (nodes->empty()) return Unavailable("it lists no nodes at all");
  Result<std::vector<slurm::ActiveJob>> jobs = Diagnostic::Error("slurm.query", "no job listing");
  auto qj = Run("squeue --json");
  if (auto u = UnavailableFrom(qj, "squeue --json")) return *u;
  if (qj->exit_status == 0) {
    jobs = slurm::ParseSqueueJson(qj->out);
    if (!jobs && jobs.error().code == kSchedulerUnavailable) return jobs.error();
  }
  if (!jobs) {
    auto ql = Run("squeue -h -t R,CG,CF,S -o '%i|%T|%N|%u|%j'");
    if (auto u = UnavailableFrom(ql, "squeue")) return *u;
    if (ql->exit_status != 0)
      return Unavailable(fmt::format("squeue exited {}: {}", ql->exit_status, ql->err));
    jobs = slurm::ParseSqueueLines(ql->out);
    if (!jobs) return jobs.error();
  }
  slurm::AttachJobs(*nodes, *jobs);
  if (want.empty()) return nodes;
  std::set<std::string> keep(want.begin(), want.end());
  std::map<std::string, SchedulerNode> out;
  for (auto& [name, n] : *nodes)
    if (keep.count(name)) out[name] = std::move(n);
  return out;
}

std::string SlurmDrainer::DrainCommand(const std::string& node, const std::string& reason) {
  return "scontrol update nodename=" + transport::ShellQuote(node) +
         " state=drain reason=" + transport::ShellQuote(reason);
}

std::string SlurmDrainer::ResumeCommand(const std::string& node) {
  return "scontrol update nodename=" + transport::ShellQuote(node) + " state=resume";
}

std::string SlurmDrainer::ClaimCommand(const SchedulerNode& current, const NodeClaim& claim) {
  return "scontrol update nodename=" + transport::ShellQuote(current.name) +
         " comment=" + transport::ShellQuote(WithClaim(current.comment, claim));
}

std::string SlurmDrainer::StackCommand(const SchedulerNode& current, const StackTag& tag) {
  auto joined = [&](const std::vector<std::string>& features) {
    std::string list;
    for (const auto& f : WithStackFeatures(features, tag)) list += (list.empty() ? "" : ",") + f;
    // An empty list is '': Slurm then shows AvailableFeatures=(null) (22.05, measured).
    return transport::ShellQuote(list);
  };
  // Both lists in one update (setting only the available one to a list without the active
  // ones fails: "Active features not subset of available features"). plumb's features are
  // both available and active; the others keep their own activity (a node_features plugin's
  // inactive modes stay inactive).
  return "scontrol update nodename=" + transport::ShellQuote(current.name) +
         " availablefeatures=" + joined(current.features) +
         " activefeatures=" + joined(current.active_features.value_or(current.features));
}

namespace {
Status CheckScontrol(const Result<transport::CommandOutput>& r, const std::string& what) {
  if (auto u = UnavailableFrom(r, what)) return *u;
  if (r->exit_status != 0) {
    std::string err = r->err.empty() ? r->out : r->err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    return Diagnostic::Error("slurm.update", fmt::format("{}: exit {}: {}", what, r->exit_status, err));
  }
  return OkStatus();
}
}  // namespace

Status SlurmDrainer::Drain(const std::string& node, const std::string& reason) {
  return CheckScontrol(Run(DrainCommand(node, reason)), "scontrol drain " + node);
}

Status SlurmDrainer::Resume(const std::string& node) {
  return CheckScontrol(Run(ResumeCommand(node)), "scontrol resume " + node);
}

Status SlurmDrainer::SetClaim(const SchedulerNode& current, const NodeClaim& claim) {
  return CheckScontrol(Run(ClaimCommand(current, claim)), "scontrol comment " + current.name);
}

Status SlurmDrainer::SetStack(const SchedulerNode& current, const StackTag& tag) {
  // A ',' or '&' in a name would write (or ask for) another feature than the tag's.
  if (std::string p = TagProblem(tag); !p.empty())
    return Diagnostic::Error("slurm.stack", fmt::format("node {}: stack tag {}: {}", current.name,
                                                        TagText(tag), p));
  if (!current.features_known)
    return Diagnostic::Error("slurm.stack",
                             fmt::format("node {}: Slurm's listing did not show its features, so "
                                         "plumb will not rewrite them (the others' would be lost)",
                                         current.name),
                             {}, {}, "check `scontrol show node " + current.name + "` lists AvailableFeatures");
  return CheckScontrol(Run(StackCommand(current, tag)), "scontrol features " + current.name);
}

Result<std::vector<StackRequest>> SlurmDrainer::StackRequests() {
  auto qj = Run("squeue --json");
  if (auto u = UnavailableFrom(qj, "squeue --json")) return *u;
  if (qj->exit_status == 0) {
    auto r = slurm::ParseStackRequestsJson(qj->out);
    if (r || r.error().code == kSchedulerUnavailable) return r;
  }
  auto ql = Run(slurm::kStackRequestLinesCommand);
  if (auto u = UnavailableFrom(ql, "squeue")) return *u;
  if (ql->exit_status != 0)
    return Unavailable(fmt::format("squeue exited {}: {}", ql->exit_status, ql->err));
  return slurm::ParseStackRequestLines(ql->out);
}

}  // namespace plumb::modules
