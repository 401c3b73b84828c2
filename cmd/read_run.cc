#include "cmd/read_run.h"

#include "cmd/bmc_factory.h"
#include "cmd/plan_scheduler.h"
#include "cmd/repo_load.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "modules/registry.h"
#include "modules/transport/local_shell.h"
#include "plans/core/clock.h"
#include "plans/core/atomic_file.h"
#include "plans/observe/bmc_gather.h"
#include "plans/observe/gather.h"
#include "plans/plan/node_select.h"
#include "plans/core/parallel.h"
#include "plans/observe/snapshot_prefetch.h"
#include "plans/trust/signature_tools.h"
#include "plans/report/facts_age.h"
#include "cmd/ssh_factory.h"
#include "inventory/version.h"

namespace plumb::cmd {
namespace {

Diagnostic LoadErrors(const GlobalOptions& g, const inventory::LoadedCluster& lc) {
  // The loader collects every problem; show them all under one headline.
  Diagnostic d = RepoLoadFailure(lc, g.repo, g.ref, g.working_tree);
  std::string all = lc.diags.ToText();
  while (!all.empty() && all.back() == '\n') all.pop_back();
  d.message += ":\n" + all;
  return d;
}

}  // namespace

void AddReadRunOptions(CLI::App& sub, ReadRunArgs& a) {
  sub.add_option("--limit", a.limit,
                 "Nodes: globs, comma lists, @group, !exclusions (gpu00[1-4],@h100,!gpu003)");
  sub.add_option("--facts", a.facts,
                 "Use a recorded facts snapshot (from `plumb gather --facts-out`) instead of "
                 "reading the nodes");
  sub.add_option("--max-facts-age", a.max_facts_age,
                 "Warn when the --facts snapshot was gathered longer ago than this before the run "
                 "(90s, 10m, 4h, 2d; 0s: never)")
      ->capture_default_str();
  sub.add_option("--fanout", a.fanout, "Nodes read at once (one SSH session each)")
      ->capture_default_str();
  sub.add_flag("--no-bmc", a.no_bmc,
               "Do not read BMCs over Redfish (firmware, bios and power keys are then not "
               "checked; with --facts, BMC facts the snapshot lacks are not missed)");
  sub.add_flag("--accept-new-host-keys", a.accept_new_host_keys,
               "Record host keys of nodes not yet in known_hosts (a changed key is always refused)");
}


std::string DayOf(const std::string& rfc3339) { return rfc3339.substr(0, 10); }

std::string JsonText(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

plans::report::DriftReport DriftReportOf(const ReadRun& r) {
  plans::report::DriftInput in;
  in.plan = &r.run.plan;
  in.cluster = &r.loaded.cluster;
  in.desired = &r.loaded.desired;
  in.modules_run = r.ran_names;
  in.today = DayOf(r.run.plan.created_at);
  return plans::report::MakeDriftReport(in);
}

void AddTrustOption(CLI::App& sub, std::string& trust_from) {
  sub.add_option("--trust-policy-from", trust_from,
                 "Judge the commit by the signing policy (policy.yaml) at this ref: a protected "
                 "branch or tag, the target branch before the merge (default: the commit's first "
                 "parent; never the commit itself)");
}

Result<plans::CommitTrust> CheckTrust(const std::string& repo, const std::string& commit,
                                      const std::string& trust_from) {
  transport::LocalShell local;
  plans::ToolSignatureVerifier verifier(local);
  return plans::CheckCommitTrust(repo, commit, trust_from, verifier);
}



Status WriteOutputWith(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (path.empty() || path == "-") {
    write(std::cout);
    std::cout.flush();
    if (!std::cout)   // a closed pipe, a full disk: the report did not get out
      return Diagnostic::Error("output.write", "cannot write the output to stdout");
    return OkStatus();
  }
  return plans::WriteFileAtomically(path, write);
}

Status WriteOutput(const std::string& path, const std::string& text) {
  return WriteOutputWith(path, [&text](std::ostream& out) { out.write(text.data(), text.size()); });
}

namespace {

// Parsed snapshot nodes allowed to wait while the repo loads (PLUMB_PREFETCH_NODES overrides,
// for the benchmark): ~40 KB each with 41 keys a node (6 KB of text), so ~160 MB at most...
size_t PrefetchNodes() {
  if (const char* v = std::getenv("PLUMB_PREFETCH_NODES"))
    if (long n = std::atol(v); n > 0) return static_cast<size_t>(n);
  return 4096;
}
// ... and at most this much snapshot text, for nodes with far bigger facts.
constexpr size_t kPrefetchBytes = 32u << 20;
// Nodes planned at once, on all cores, as they come out of the snapshot.
constexpr size_t kPlanBatch = 256;

// What a run needs once the cluster repo is loaded: the selected nodes, the read-only
// scheduler, and the planner's input.
struct Prepared {
  std::vector<const inventory::Node*> selected;
  std::vector<const modules::Module*> bmc_modules;
  PlanScheduler scheduler;
  plans::PlanRunInput in;
  Diagnostics notes;
};

Result<std::unique_ptr<Prepared>> Prepare(const GlobalOptions& g, const ReadRunArgs& a, ReadRun& rr) {
  if (!rr.loaded.ok()) return LoadErrors(g, rr.loaded);
  const inventory::Cluster& cluster = rr.loaded.cluster;
  auto p = std::make_unique<Prepared>();
  auto selected = plans::SelectNodes(cluster, a.limit);
  if (!selected.ok()) return selected.error();
  p->selected = std::move(selected.value());
  std::vector<std::string> limit;
  for (const inventory::Node* n : p->selected) limit.push_back(n->name);

  // Every module plumb knows; the Redfish ones (firmware, bios, power) read the BMC.
  rr.modules.pointers = modules::AllModules();
  for (const modules::Module* m : rr.modules.pointers)
    if (m->HasBmcProbe()) p->bmc_modules.push_back(m);
  if (a.read_scheduler && !a.no_scheduler) p->scheduler = MakePlanScheduler(cluster, rr.loaded.desired);
  if (a.read_scheduler && a.no_scheduler)
    p->notes.Add(Diagnostic::Warning("plan.no-scheduler",
                                     "scheduler not read (--no-scheduler): nodes already drained "
                                     "or down and running jobs are not counted"));

  plans::PlanRunInput& in = p->in;
  in.cluster = &cluster;
  in.desired = &rr.loaded.desired;
  in.limit = std::move(limit);
  in.modules = rr.modules.pointers;
  if (!a.only_modules.empty())
    std::erase_if(in.modules, [&](const modules::Module* m) {
      return std::find(a.only_modules.begin(), a.only_modules.end(), m->Name()) ==
             a.only_modules.end();
    });
  in.scheduler = p->scheduler.drainer();
  in.now = plans::Rfc3339(std::chrono::system_clock::now());
  in.files = rr.loaded.files.get();
  const GlobalOptions at = g;
  in.load_at = [at](const std::string& commit) -> Result<plans::DesiredByNode> {
    inventory::LoadedCluster old = inventory::LoadCluster({at.repo, commit, false, {}});
    if (!old.ok()) {
      const auto& items = old.diags.items();
      std::string why = "did not load";
      for (const Diagnostic& d : items)
        if (d.severity == Severity::kError) { why = d.message; break; }
      return Diagnostic::Error("plan.marker-commit", why);
    }
    return std::move(old.desired);
  };
  return p;
}

// When the facts were read, on the plan (every format shows it), and a warning when a
// snapshot is older than --max-facts-age (or does not say when it was made).
void DateFacts(const ReadRunArgs& a, const std::optional<long>& max_age, ReadRun& rr) {
  plans::Plan& plan = rr.run.plan;
  const std::string& at = rr.observed.gathered_at;
  if (!at.empty() && !plans::ParseRfc3339(at)) {
    rr.run.diags.Add(Diagnostic::Warning(
        "facts.gathered-at",
        fmt::format("the snapshot {} says it was gathered at '{}', which is not a time: its age is "
                    "not known", a.facts, at),
        {}, "gathered_at", "gather again: plumb gather --facts-out FILE"));
    return;
  }
  plan.gathered_at = at;
  if (a.facts.empty()) return;   // read by this run
  if (at.empty()) {
    rr.run.diags.Add(Diagnostic::Warning(
        "facts.gathered-at",
        fmt::format("the snapshot {} does not say when it was gathered: its age is not known",
                    a.facts),
        {}, "gathered_at", "gather again: plumb gather --facts-out FILE"));
    return;
  }
  auto age = plans::report::FactsAgeSeconds(at, plan.created_at);
  if (!age || !max_age || *max_age <= 0 || *age <= *max_age) return;
  rr.run.diags.Add(Diagnostic::Warning(
      "facts.old",
      fmt::format("the facts in {} were gathered at {}, {} before this run (more than "
                  "--max-facts-age {}): the nodes may have changed since",
                  a.facts, at, plans::report::AgeText(*age), a.max_facts_age),
      {}, {}, "gather again (plumb gather --facts-out FILE), or raise --max-facts-age"));
}

}  // namespace

Result<std::unique_ptr<ReadRun>> DoReadRun(const GlobalOptions& g, const ReadRunArgs& a) {
  const std::optional<long> max_age = inventory::ParseDuration(a.max_facts_age);
  if (!max_age && a.max_facts_age != "0" && a.max_facts_age != "0s")
    return Diagnostic::Error("plan.max-facts-age",
                             fmt::format("--max-facts-age '{}' is not a duration", a.max_facts_age),
                             {}, {}, "a duration like 90s, 10m, 4h or 2d (0s: never warn)");
  auto rr = std::make_unique<ReadRun>();
  const inventory::LoadOptions load = RepoLoadOptions(g.repo, g.ref, g.working_tree);
  std::unique_ptr<Prepared> p;
  // A recorded snapshot starts parsing now, while the repo loads on this thread (which leaves
  // the other cores idle otherwise), a bounded number of nodes ahead. Then its parsing threads
  // (one per core) share the cores with the planning, which runs on all cores too: on 2 cores
  // at 100,000 nodes, planning on this thread alone kept the parsers waiting on it.
  std::unique_ptr<plans::SnapshotPrefetch> prefetch;
  if (!a.facts.empty())
    prefetch = std::make_unique<plans::SnapshotPrefetch>(a.facts, PrefetchNodes(), kPrefetchBytes,
                                                         plans::Cores());
  rr->loaded = inventory::LoadCluster(load);   // `load` carries the registry's key check
  auto prepared = Prepare(g, a, *rr);
  if (!prepared.ok()) return prepared.error();
  p = std::move(prepared.value());
  // The signed-commit policy, before any node is read: a refused commit is never planned.
  // Uncommitted edits have no signature to judge (and apply refuses their plans anyway).
  if (a.check_trust && !g.working_tree) {
    auto trust = CheckTrust(g.repo, rr->loaded.cluster.source.commit, a.trust_from);
    if (!trust) return trust.error();
    rr->trust = std::move(trust.value());
  }
  if (!a.facts.empty()) {
    // A recorded snapshot is planned node by node as it is parsed: its facts are never all in
    // memory at once (10,000 nodes: ~800 MB as one JSON tree).
    plans::PlanRunner runner(p->in);
    // BMC facts the snapshot lacks for a node with a BMC were never read: its BMC keys are
    // unread there, not in sync (--no-bmc: not checked, as when reading live).
    const plans::UnreadBmcFacts unread(a.no_bmc ? std::vector<const inventory::Node*>{} : p->selected,
                                       p->bmc_modules);
    auto header = prefetch->DrainInBatches(kPlanBatch, [&](std::vector<plans::NodeObservation>&& n) {
      for (plans::NodeObservation& o : n) unread.Mark(o);
      runner.Add(std::move(n));
    });
    if (!header.ok()) return header.error();
    rr->observed = std::move(header.value());
    rr->run = runner.Finish();
  } else {
    const inventory::Cluster& cluster = rr->loaded.cluster;
    if (a.fanout < 1) return Diagnostic::Error("plan.fanout", "--fanout must be at least 1");
    const auto gather_started = std::chrono::system_clock::now();
    modules::SshOverrides extra;
    extra.accept_new_hostkeys = a.accept_new_host_keys;
    if (const char* pass = std::getenv("PLUMB_SSH_PASSPHRASE")) extra.identity_passphrase = pass;
    SshShellFactory shells(cluster.ssh, RepoRoot(g), extra);
    plans::GatherOptions opt;
    opt.fanout = a.fanout;
    opt.command_timeout = std::chrono::seconds(cluster.ssh.command_timeout_s);
    // The same progress line gather shows, on a terminal: a plan of 1,000 nodes reads for a
    // while before it prints anything.
    NodeProgressLine progress("reading nodes");
    // The BMCs of the nodes that name one are read at the same time (firmware, BIOS, power).
    plans::OpenBmc open;
    if (!a.no_bmc && !plans::BmcTargetsOf(p->selected).empty())
      open = ClusterBmcOpener(g.repo, cluster, p->notes);
    rr->observed = plans::GatherWithBmc(
        p->selected, plans::ModulesToRead(modules::AllModules(), rr->loaded.desired), shells, opt,
        ProgressOnStderr() ? &progress : nullptr, open);
    rr->observed.gathered_at = plans::Rfc3339(gather_started);
    p->in.observed = &rr->observed;
    rr->run = plans::RunPlan(p->in);
  }
  DateFacts(a, max_age, *rr);
  Diagnostics& notes = p->notes;
  rr->ran = rr->run.modules_run;
  for (const modules::Module* m : rr->ran) rr->ran_names.insert(std::string(m->Name()));
  rr->run.diags.Append(notes);
  rr->run.plan.only_modules = a.only_modules;
  // Keys that no module of this run could check are named, so "no changes" is never a
  // silent "not looked at" (a run of some modules leaves the others' keys on purpose).
  if (a.only_modules.empty())
    if (auto w = plans::UncheckedKeysWarning(rr->loaded.desired, rr->ran)) rr->run.diags.Add(*w);
  return rr;
}

}  // namespace plumb::cmd
