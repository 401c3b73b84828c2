#include "cmd/read_run.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "plans/gather.h"
#include "plans/node_select.h"
#include "plans/ssh_factory.h"

namespace plumb::cmd {
namespace {

Diagnostic LoadErrors(const inventory::LoadedCluster& lc) {
  // The loader collects every problem; show them all, the first as the headline.
  Diagnostic d = Diagnostic::Error("plan.load", "the cluster repo did not load:\n" + lc.diags.ToText(),
                                   {}, {}, "run `plumb validate` for the details");
  return d;
}

// The modules whose facts this run has: with a snapshot, those named in it (a snapshot made
// without BMC reads has no firmware facts, and its firmware keys are then "not checked", not
// "in sync"); with a live gather, every module that has a probe.
std::vector<const modules::Module*> ModulesWithFacts(const std::vector<const modules::Module*>& all,
                                                     const plans::ObservedState& s) {
  std::set<std::string> seen;
  for (const auto& [_, n] : s.nodes)
    for (const auto& [m, __] : n.facts) seen.insert(m);
  if (seen.empty()) return all;
  std::vector<const modules::Module*> out;
  for (const modules::Module* m : all)
    if (seen.count(std::string(m->Name()))) out.push_back(m);
  return out;
}

// Scheduler for the plan's max_unavailable and blocking jobs. Read-only: only Query is called.
std::unique_ptr<modules::Drainer> MakeScheduler(const inventory::Cluster& c) {
  // The Slurm drainer lands with the apply branch; until then plans are made blind to the
  // scheduler, and say so.
  (void)c;
  return nullptr;
}

}  // namespace

void AddReadRunOptions(CLI::App& sub, ReadRunArgs& a) {
  sub.add_option("--limit", a.limit,
                 "Nodes: globs, comma lists, @group, !exclusions (gpu00[1-4],@h100,!gpu003)");
  sub.add_option("--facts", a.facts,
                 "Use a recorded facts snapshot (from `plumb gather --facts-out`) instead of "
                 "reading the nodes");
  sub.add_option("--fanout", a.fanout, "Nodes read at once (one SSH session each)")
      ->capture_default_str();
  sub.add_flag("--accept-new-host-keys", a.accept_new_host_keys,
               "Record host keys of nodes not yet in known_hosts (a changed key is always refused)");
}

std::string NowRfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string DayOf(const std::string& rfc3339) { return rfc3339.substr(0, 10); }

Status WriteOutput(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return OkStatus();
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    out << text;
    if (!out.flush())
      return Diagnostic::Error("output.write", fmt::format("cannot write '{}'", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return Diagnostic::Error("output.write", fmt::format("cannot rename '{}' to '{}'", tmp, path));
  return OkStatus();
}

Result<std::unique_ptr<ReadRun>> DoReadRun(const GlobalOptions& g, const ReadRunArgs& a) {
  auto rr = std::make_unique<ReadRun>();
  rr->loaded = inventory::LoadCluster({g.repo, g.ref, g.working_tree});
  if (!rr->loaded.ok()) return LoadErrors(rr->loaded);
  const inventory::Cluster& cluster = rr->loaded.cluster;

  auto selected = plans::SelectNodes(cluster, a.limit);
  if (!selected.ok()) return selected.error();
  std::vector<std::string> limit;
  for (const inventory::Node* n : *selected) limit.push_back(n->name);

  rr->modules = GatherModules();
  if (!a.facts.empty()) {
    auto snap = plans::ReadObservedState(a.facts);
    if (!snap.ok()) return snap.error();
    rr->observed = std::move(snap.value());
  } else {
    if (a.fanout < 1) return Diagnostic::Error("plan.fanout", "--fanout must be at least 1");
    plans::SshOverrides extra;
    extra.accept_new_hostkeys = a.accept_new_host_keys;
    if (const char* p = std::getenv("PLUMB_SSH_PASSPHRASE")) extra.identity_passphrase = p;
    plans::SshShellFactory shells(cluster.ssh, RepoRoot(g), extra);
    plans::GatherOptions opt;
    opt.fanout = a.fanout;
    opt.command_timeout = std::chrono::seconds(cluster.ssh.command_timeout_s);
    rr->observed = plans::Gather(*selected, rr->modules.pointers, shells, opt);
  }
  rr->ran = ModulesWithFacts(rr->modules.pointers, rr->observed);
  for (const modules::Module* m : rr->ran) rr->ran_names.insert(std::string(m->Name()));

  std::unique_ptr<modules::Drainer> scheduler;
  if (a.read_scheduler) scheduler = MakeScheduler(cluster);

  plans::PlanRunInput in;
  in.cluster = &cluster;
  in.desired = &rr->loaded.desired;
  in.limit = limit;
  in.observed = &rr->observed;
  in.modules = rr->ran;
  in.scheduler = scheduler.get();
  in.now = NowRfc3339();
  const GlobalOptions at = g;
  in.load_at = [at](const std::string& commit) -> Result<plans::DesiredByNode> {
    inventory::LoadedCluster old = inventory::LoadCluster({at.repo, commit, false});
    if (!old.ok()) {
      const auto& items = old.diags.items();
      std::string why = "did not load";
      for (const Diagnostic& d : items)
        if (d.severity == Severity::kError) { why = d.message; break; }
      return Diagnostic::Error("plan.marker-commit", why);
    }
    return std::move(old.desired);
  };
  rr->run = plans::RunPlan(in);
  if (a.read_scheduler && !scheduler)
    rr->run.diags.Add(Diagnostic{Severity::kNote, "plan.no-scheduler", {}, {},
                                 "scheduler state not read (no Slurm drainer in this build): "
                                 "nodes already out and running jobs are not counted",
                                 {}});
  // Keys that no module of this run could check are named, so "no changes" is never a
  // silent "not looked at".
  std::map<std::string, nlohmann::json> top_keys;   // each top-level key once, with a value
  for (const auto& [node, nd] : rr->loaded.desired)
    for (auto it = nd.desired.begin(); it != nd.desired.end(); ++it)
      top_keys.emplace(it.key(), it.value());
  std::set<std::string> unchecked;
  for (const auto& [key, value] : top_keys) {
    nlohmann::json one = {{key, value}};
    bool owned = false;
    for (const modules::Module* m : rr->ran)
      if (m->Wants(one)) { owned = true; break; }
    if (!owned) unchecked.insert(key);
  }
  if (!unchecked.empty()) {
    std::string keys;
    for (const std::string& k : unchecked) keys += (keys.empty() ? "" : ", ") + k;
    rr->run.diags.Add(Diagnostic::Warning(
        "plan.unchecked", fmt::format("not checked (no module of this run has facts for them): {}", keys),
        {}, {}, "firmware and bios need BMC reads; other keys need their module's probe"));
  }
  return rr;
}

}  // namespace plumb::cmd
