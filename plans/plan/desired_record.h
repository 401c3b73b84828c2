#pragma once
/// What a plan records of the desired state it was made from, so that apply can accept it at
/// another commit - the merge of the reviewed pull request, a squash, a rebase - exactly when
/// that commit wants the same of every planned node, and name the nodes and keys when not.
///
/// A node's desired-state *image* is everything in the cluster repo that decides what apply
/// does to it, apart from the rollout policies (which CheckPlanAgainstCommit compares field by
/// field, and which the engine enforces from the commit applied):
///   {"desired": <its merged desired values>, "rollout": <its policy's name>,
///    "waivers": [{"keys", "expires"} of each waiver whose `nodes` names it, in file order]}
/// Its digest is "sha256:" over the canonical JSON. Nodes with the same image share one entry
/// of Plan::desired_states; each entry also names the repo files the image came from, and
/// Plan::desired_files holds each such file's SHA-256, so a refusal can say which file changed.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/file_source.h"
#include "inventory/model.h"
#include "plans/plan/plan.h"
#include "plans/plan/planner.h"

namespace plumb::plans {

/// The image of `nd` in `cluster` (see above).
nlohmann::json DesiredImage(const inventory::NodeDesired& nd, const inventory::Cluster& cluster);

/// The repo files `nd`'s image came from: inventory.yaml, its stack and rollout files, every
/// file one of its values was written in, waivers.yaml when a waiver names it. Sorted.
std::vector<std::string> DesiredFiles(const inventory::NodeDesired& nd,
                                      const inventory::Cluster& cluster);

/// Fills `desired_digest` of every planned node, `plan.desired_states` and (when `files` is
/// given: the tree the cluster was loaded from) `plan.desired_files`. Nodes sharing their
/// merged values, policy and waivers are hashed once.
void RecordDesiredState(Plan& plan, const inventory::Cluster& cluster,
                        const DesiredByNode& desired, const inventory::FileSource* files);

/// How two images differ, key by key, in user terms: "sysctl.vm.swappiness: 10 -> 60",
/// "rollout: rolling -> fast", "waivers: [...] -> [...]". Empty when they are equal.
std::vector<std::string> ImageDifferences(const nlohmann::json& planned,
                                          const nlohmann::json& now);

}  // namespace plumb::plans
