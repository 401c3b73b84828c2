#pragma once
/// The plan file: versioned JSON (`format_version`), the stable contract between `plumb plan
/// --out` and `plumb apply`. Its schema is schemas/plan.schema.json.
#include <string>

#include <nlohmann/json.hpp>

#include "plans/plan.h"
#include "schemas/result.h"

namespace plumb::plans {

/// The plan as JSON, `digest` included as it is in `plan`.
nlohmann::json PlanToJson(const Plan& plan);
/// Reads a plan file's JSON. Rejects other format versions with a clear message. Does not
/// check the digest (see VerifyPlanDigest).
Result<Plan> PlanFromJson(const nlohmann::json& j);
/// The digest the plan should carry: SHA-256 over its canonical JSON without "digest".
std::string ComputePlanDigest(const Plan& plan);
/// Sets plan.digest.
void SealPlan(Plan& plan);
/// SealPlan, then the plan file's text: PlanToJson(plan).dump(2) and a newline. The JSON is
/// built once and hashed while the text is written (10,000 nodes: ~0.1 s each).
std::string SealPlanToFile(Plan& plan);
/// Error "plan.tampered" when the stored digest does not match the content.
Status VerifyPlanDigest(const Plan& plan);

}  // namespace plumb::plans
