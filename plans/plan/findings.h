#pragma once
/// Health findings (plans/plan/plan.h Finding): a node's failed and warned checks, as the planner
/// reports them and as apply judges a node before it changes it. One place, so plan, drift and
/// apply call the same node unhealthy for the same facts.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/model.h"
#include "modules/check_result.h"
#include "modules/module.h"
#include "plans/plan/plan.h"
#include "schemas/result.h"

namespace plumb::plans {

/// Is `c` a finding: failed, or warned? (Passed and skipped checks are not shown.)
bool IsFinding(const modules::CheckResult& c);

/// Where `health.<module>` is pinned for this node: its own line, else the first of its keys'.
Location HealthOrigin(const inventory::NodeDesired& nd, std::string_view module);

/// The findings of health module `m` on a node from its facts (`facts`: that module's), each
/// located at the pin; an error "facts.malformed" when the facts do not read. Empty when the
/// node does not pin the module.
Result<std::vector<Finding>> ModuleFindings(const modules::Module& m, const inventory::NodeDesired& nd,
                                            const nlohmann::json& facts);

/// The failed checks (warnings aside) of the gathered health modules among `modules` that
/// `desired` pins, on facts `facts` (module name -> facts), one line each ("gpu_health: GPU
/// uncorrected ECC errors on GPU 3: 2 (max 0): ..."). Facts that do not read are a line too: a
/// check that could not be judged has not passed. On-demand modules without facts are not
/// judged (a gather never runs them). Empty: healthy.
std::vector<std::string> FailedChecks(const nlohmann::json& desired, const nlohmann::json& facts,
                                      const std::vector<const modules::Module*>& modules);

/// What a check allows, for people: {"max": 0} -> "max 0", {"equals": 8} -> "= 8",
/// {"min": 350} -> "min 350", {"forbidden": [48, 63]} -> "not 48, 63", "read" -> "read".
std::string ThresholdText(const nlohmann::json& threshold);

/// A check as one line: "gpu_health: GPU uncorrected ECC errors on GPU 3: 2 (max 0): 2
/// uncorrected ECC errors since the driver loaded > 0". The module, the check, the subject
/// (GPU, port, link) when it has one, the value against its threshold, and the check's words.
std::string FindingText(const modules::CheckResult& c);

}  // namespace plumb::plans
