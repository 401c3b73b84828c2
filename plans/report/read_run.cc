#include "plans/report/read_run.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "inventory/version.h"
#include "plans/core/clock.h"
#include "plans/core/parallel.h"
#include "plans/observe/snapshot_prefetch.h"
#include "plans/plan/node_select.h"
#include "plans/report/facts_age.h"

namespace plumb::plans::report {
namespace {

// ... at most this much snapshot text waits too, for nodes with far bigger facts...
constexpr size_t kReadRunPrefetchBytes = 32u << 20;
// ... and nodes are planned this many at once, on all cores, as they come out of the snapshot.
constexpr size_t kReadRunPlanBatch = 256;

// What a run needs once the cluster repo is loaded: the selected nodes and the planner's input.
struct ReadRunPrepared {
  std::vector<const inventory::Node*> selected;
  std::vector<const modules::Module*> bmc_modules;
  PlanRunInput in;
  Diagnostics notes;
};

Diagnostic ReadRunLoadErrors(const ReadRunSources& s, const inventory::LoadedCluster& lc) {
  // The loader collects every problem; show them all under one headline.
  Diagnostic d = s.load_failure ? s.load_failure(lc)
                                : Diagnostic::Error("repo.invalid", "the cluster repo is invalid");
  std::string all = lc.diags.ToText();
  while (!all.empty() && all.back() == '\n') all.pop_back();
  d.message += ":\n" + all;
  return d;
}

Result<ReadRunPrepared> PrepareReadRun(const ReadRunOptions& o, const ReadRunSources& s,
                                       ReadRunResult& rr) {
  if (!rr.loaded.ok()) return ReadRunLoadErrors(s, rr.loaded);
  const inventory::Cluster& cluster = rr.loaded.cluster;
  ReadRunPrepared p;
  auto selected = SelectNodes(cluster, o.limit);
  if (!selected.ok()) return selected.error();
  p.selected = std::move(selected.value());
  for (const modules::Module* m : s.modules)   // the Redfish ones (firmware, bios, power)
    if (m->HasBmcProbe()) p.bmc_modules.push_back(m);
  if (o.note_no_scheduler)
    p.notes.Add(Diagnostic::Warning("plan.no-scheduler",
                                    "scheduler not read (--no-scheduler): nodes already drained "
                                    "or down and running jobs are not counted"));
  PlanRunInput& in = p.in;
  in.cluster = &cluster;
  in.desired = &rr.loaded.desired;
  for (const inventory::Node* n : p.selected) in.limit.push_back(n->name);
  in.modules = s.modules;
  if (!o.only_modules.empty())
    std::erase_if(in.modules, [&](const modules::Module* m) {
      return std::find(o.only_modules.begin(), o.only_modules.end(), m->Name()) ==
             o.only_modules.end();
    });
  in.scheduler = s.scheduler ? s.scheduler(cluster, rr.loaded.desired) : nullptr;
  in.count_stacks = o.only_modules.empty();
  in.now = s.now ? s.now() : Rfc3339(std::chrono::system_clock::now());
  in.files = rr.loaded.files.get();
  in.load_at = s.load_at;
  return p;
}

Diagnostic UnknownAge(const std::string& message) {
  return Diagnostic::Warning("facts.gathered-at", message, {}, "gathered_at",
                             "gather again: plumb gather --facts-out FILE");
}

// When the facts were read, on the plan (every format shows it), and a warning when a
// snapshot is older than --max-facts-age (or does not say when it was made).
void DateFacts(const ReadRunOptions& o, const std::optional<long>& max_age, ReadRunResult& rr) {
  Plan& plan = rr.run.plan;
  const std::string& at = rr.observed.gathered_at;
  if (!at.empty() && !ParseRfc3339(at)) {
    rr.run.diags.Add(UnknownAge(fmt::format(
        "the snapshot {} says it was gathered at '{}', which is not a time: its age is not known",
        o.facts, at)));
    return;
  }
  plan.gathered_at = at;
  if (o.facts.empty()) return;   // read by this run
  if (at.empty()) {
    rr.run.diags.Add(UnknownAge(fmt::format(
        "the snapshot {} does not say when it was gathered: its age is not known", o.facts)));
    return;
  }
  auto age = FactsAgeSeconds(at, plan.created_at);
  if (!age || !max_age || *max_age <= 0 || *age <= *max_age) return;
  rr.run.diags.Add(Diagnostic::Warning(
      "facts.old",
      fmt::format("the facts in {} were gathered at {}, {} before this run (more than "
                  "--max-facts-age {}): the nodes may have changed since",
                  o.facts, at, AgeText(*age), o.max_facts_age),
      {}, {}, "gather again (plumb gather --facts-out FILE), or raise --max-facts-age"));
}

// A recorded snapshot is planned node by node as it is parsed: its facts are never all in
// memory at once (10,000 nodes: ~800 MB as one JSON tree).
Status PlanSnapshot(const ReadRunOptions& o, ReadRunPrepared& p, SnapshotPrefetch& prefetch,
                    ReadRunResult& rr) {
  PlanRunner runner(p.in);
  // BMC facts the snapshot lacks for a node with a BMC were never read: its BMC keys are
  // unread there, not in sync (--no-bmc: not checked, as when reading live).
  const UnreadBmcFacts unread(o.no_bmc ? std::vector<const inventory::Node*>{} : p.selected,
                              p.bmc_modules);
  auto header = prefetch.DrainInBatches(kReadRunPlanBatch, [&](std::vector<NodeObservation>&& n) {
    for (NodeObservation& obs : n) unread.Mark(obs);
    runner.Add(std::move(n));
  });
  if (!header.ok()) return header.error();
  rr.observed = std::move(header.value());
  rr.run = runner.Finish();
  return OkStatus();
}

Status PlanLive(const ReadRunOptions& o, const ReadRunSources& s, ReadRunPrepared& p,
                ReadRunResult& rr) {
  const inventory::Cluster& cluster = rr.loaded.cluster;
  if (o.fanout < 1) return Diagnostic::Error("plan.fanout", "--fanout must be at least 1");
  const auto gather_started = std::chrono::system_clock::now();
  std::unique_ptr<ShellFactory> shells = s.shells(cluster);
  GatherOptions opt;
  opt.fanout = o.fanout;
  opt.command_timeout = std::chrono::seconds(cluster.ssh.command_timeout_s);
  // The BMCs of the nodes that name one are read at the same time (firmware, BIOS, power).
  OpenBmc open;
  if (!o.no_bmc && s.bmc && !BmcTargetsOf(p.selected).empty()) open = s.bmc(cluster, p.notes);
  rr.observed = GatherWithBmc(p.selected, ModulesToRead(s.modules, rr.loaded.desired), *shells,
                              opt, s.progress, open);
  rr.observed.gathered_at = Rfc3339(gather_started);
  p.in.observed = &rr.observed;
  rr.run = RunPlan(p.in);
  return OkStatus();
}

void FinishReadRun(const ReadRunOptions& o, ReadRunPrepared& p, ReadRunResult& rr) {
  rr.ran = rr.run.modules_run;
  for (const modules::Module* m : rr.ran) rr.ran_names.insert(std::string(m->Name()));
  rr.run.diags.Append(p.notes);
  rr.run.plan.only_modules = o.only_modules;
  // Keys that no module of this run could check are named, so "no changes" is never a
  // silent "not looked at" (a run of some modules leaves the others' keys on purpose).
  if (o.only_modules.empty())
    if (auto w = UncheckedKeysWarning(rr.loaded.desired, rr.ran)) rr.run.diags.Add(*w);
}

}  // namespace

Status ReadAndPlan(const ReadRunOptions& o, const ReadRunSources& s, ReadRunResult& rr) {
  const std::optional<long> max_age = inventory::ParseDuration(o.max_facts_age);
  if (!max_age && o.max_facts_age != "0" && o.max_facts_age != "0s")
    return Diagnostic::Error("plan.max-facts-age",
                             fmt::format("--max-facts-age '{}' is not a duration", o.max_facts_age),
                             {}, {}, "a duration like 90s, 10m, 4h or 2d (0s: never warn)");
  // A recorded snapshot starts parsing now, while the repo loads on this thread (which leaves
  // the other cores idle otherwise), a bounded number of nodes ahead. Then its parsing threads
  // (one per core) share the cores with the planning, which runs on all cores too: on 2 cores
  // at 100,000 nodes, planning on this thread alone kept the parsers waiting on it.
  std::unique_ptr<SnapshotPrefetch> prefetch;
  if (!o.facts.empty())
    prefetch = std::make_unique<SnapshotPrefetch>(o.facts, o.prefetch_nodes,
                                                  kReadRunPrefetchBytes, Cores());
  rr.loaded = s.load();
  auto prepared = PrepareReadRun(o, s, rr);
  if (!prepared.ok()) return prepared.error();
  ReadRunPrepared& p = prepared.value();
  // Before any node is read: a refused commit is never planned.
  if (s.check_commit)
    if (Status st = s.check_commit(rr.loaded.cluster); !st.ok()) return st;
  Status read = prefetch ? PlanSnapshot(o, p, *prefetch, rr) : PlanLive(o, s, p, rr);
  if (!read.ok()) return read;
  DateFacts(o, max_age, rr);
  FinishReadRun(o, p, rr);
  return OkStatus();
}

DriftReport DriftReportOf(const ReadRunResult& r) {
  DriftInput in;
  in.plan = &r.run.plan;
  in.cluster = &r.loaded.cluster;
  in.desired = &r.loaded.desired;
  in.modules_run = r.ran_names;
  in.today = r.run.plan.created_at.substr(0, 10);
  return MakeDriftReport(in);
}

DriftReport DriftReportWithNotes(const ReadRunResult& r) {
  DriftReport report = DriftReportOf(r);
  report.diags.Append(r.run.diags);
  for (const Diagnostic& d : r.loaded.diags.items())
    if (d.code != "waivers.expired") report.diags.Add(d);
  return report;
}

Result<DesiredByNode> DesiredOfMarkerLoad(inventory::LoadedCluster old) {
  if (!old.ok()) {
    std::string why = "did not load";
    for (const Diagnostic& d : old.diags.items())
      if (d.severity == Severity::kError) {
        why = d.message;
        break;
      }
    return Diagnostic::Error("plan.marker-commit", why);
  }
  return std::move(old.desired);
}

}  // namespace plumb::plans::report
