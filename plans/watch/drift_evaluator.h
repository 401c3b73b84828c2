#pragma once
/// Verdicts for nodes the watch has read, against one desired state: the planner and the drift
/// report of `plumb drift` (plans/observe/plan_run.h, plans/report/drift.h), run over just the nodes
/// whose facts or verdict may have changed. Waivers, repair vs intent and unreadable modules
/// follow drift's rules because they are drift's code.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "inventory/load.h"
#include "modules/module.h"
#include "plans/plan/planner.h"
#include "plans/report/drift.h"
#include "schemas/result.h"

namespace plumb::plans::watch {

/// Desired states at the commits nodes' markers name (repair vs intent), loaded once each and
/// kept while the watch runs. Bounded: past `capacity` commits the oldest are dropped between
/// evaluations (never during one: the planner holds pointers into them).
class MarkerCommits {
 public:
  using Loader = std::function<Result<DesiredByNode>(const std::string& commit)>;
  explicit MarkerCommits(Loader load, size_t capacity = 8)
      : load_(std::move(load)), capacity_(capacity) {}
  /// The desired state at `commit`, or null when it does not load (its changes are intent).
  const DesiredByNode* Find(const std::string& commit);
  /// Makes room for new commits; call between evaluations.
  void Trim();
  void Clear() { held_.clear(); order_.clear(); }

 private:
  Loader load_;
  size_t capacity_;
  std::map<std::string, std::unique_ptr<DesiredByNode>> held_;   ///< null: did not load
  std::vector<std::string> order_;                                ///< first loaded first
};

/// The facts to judge a node by (an unreadable node: readable=false), made when the planner
/// reaches it, so only one node's facts are decoded at a time.
using FactsOf = std::function<NodeFacts(const std::string& node)>;

/// The verdict of each of `nodes` (unreadable ones included; by name) against `loaded`. `now`
/// is RFC 3339 UTC (waiver expiry: a waiver is good through its day).
std::vector<report::DriftNode> JudgeNodes(const inventory::LoadedCluster& loaded,
                                          const std::vector<const modules::Module*>& modules,
                                          const std::vector<std::string>& nodes,
                                          const FactsOf& facts_of, MarkerCommits& commits,
                                          const std::string& now);

}  // namespace plumb::plans::watch
