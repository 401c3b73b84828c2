#include "modules/drain/slurm_drainer.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "modules/drain/slurm_parse.h"

namespace plumb::modules {

Result<transport::CommandOutput> SlurmDrainer::Run(const std::string& cmd) {
  return shell_.Run(cmd, timeout_);
}

Result<std::map<std::string, SchedulerNode>> SlurmDrainer::Query(
    const std::vector<std::string>& want) {
  Result<std::map<std::string, SchedulerNode>> nodes =
      Diagnostic::Error("slurm.query", "no node listing");
  auto js = Run("sinfo --json");
  if (js && js->exit_status == 0) nodes = slurm::ParseSinfoJson(js->out);
  if (!nodes) {
    auto sc = Run("scontrol show node -o");
    if (!sc) return sc.error();
    if (sc->exit_status != 0)
      return Diagnostic::Error("slurm.query", fmt::format("scontrol show node exited {}: {}",
                                                          sc->exit_status, sc->err));
    nodes = slurm::ParseScontrolNodes(sc->out);
    if (!nodes) return nodes.error();
  }
  Result<std::vector<slurm::ActiveJob>> jobs = Diagnostic::Error("slurm.query", "no job listing");
  auto qj = Run("squeue --json");
  if (qj && qj->exit_status == 0) jobs = slurm::ParseSqueueJson(qj->out);
  if (!jobs) {
    auto ql = Run("squeue -h -t R,CG,CF,S -o '%i|%T|%N|%u|%j'");
    if (!ql) return ql.error();
    if (ql->exit_status != 0)
      return Diagnostic::Error("slurm.query",
                               fmt::format("squeue exited {}: {}", ql->exit_status, ql->err));
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

namespace {
Status Check(const Result<transport::CommandOutput>& r, const std::string& what) {
  if (!r) return r.error();
  if (r->exit_status != 0) {
    std::string err = r->err.empty() ? r->out : r->err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    return Diagnostic::Error("slurm.update", fmt::format("{}: exit {}: {}", what, r->exit_status, err));
  }
  return OkStatus();
}
}  // namespace

Status SlurmDrainer::Drain(const std::string& node, const std::string& reason) {
  return Check(Run(DrainCommand(node, reason)), "scontrol drain " + node);
}

Status SlurmDrainer::Resume(const std::string& node) {
  return Check(Run(ResumeCommand(node)), "scontrol resume " + node);
}

}  // namespace plumb::modules
