#include "plans/watch/drift_evaluator.h"

#include "plans/observe/plan_run.h"

namespace plumb::plans::watch {

const DesiredByNode* MarkerCommits::Find(const std::string& commit) {
  if (auto it = held_.find(commit); it != held_.end()) return it->second.get();
  std::unique_ptr<DesiredByNode> loaded;
  if (load_) {
    auto r = load_(commit);
    if (r.ok()) loaded = std::make_unique<DesiredByNode>(std::move(r.value()));
  }
  order_.push_back(commit);
  return (held_[commit] = std::move(loaded)).get();
}

void MarkerCommits::Trim() {
  while (order_.size() > capacity_) {
    held_.erase(order_.front());
    order_.erase(order_.begin());
  }
}

std::vector<report::DriftNode> JudgeNodes(const inventory::LoadedCluster& loaded,
                                          const std::vector<const modules::Module*>& modules,
                                          const std::vector<std::string>& nodes,
                                          const FactsOf& facts_of, MarkerCommits& commits,
                                          const std::string& now) {
  if (nodes.empty()) return {};
  commits.Trim();
  PlanRunInput in;
  in.cluster = &loaded.cluster;
  in.desired = &loaded.desired;
  in.limit = nodes;
  in.modules = modules;
  in.now = now;
  in.find_loaded = [&commits](const std::string& commit) { return commits.Find(commit); };
  // No scheduler: drift never reads it, and neither does the watch.
  PlanRunner runner(in);
  for (const std::string& name : nodes) runner.Add(name, facts_of(name));
  PlanRun run = runner.Finish();

  report::DriftInput din;
  din.plan = &run.plan;
  din.cluster = &loaded.cluster;
  din.desired = &loaded.desired;
  for (const modules::Module* m : run.modules_run) din.modules_run.insert(std::string(m->Name()));
  din.today = now.substr(0, 10);
  report::DriftReport r = report::MakeDriftReport(din);
  return std::move(r.nodes);
}

}  // namespace plumb::plans::watch
