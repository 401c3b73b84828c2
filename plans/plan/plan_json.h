#pragma once
/// The plan file: versioned JSON (`format_version`), the stable contract between `plumb plan
/// --out` and `plumb apply`. Its schema is schemas/plan.schema.json.
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plans/plan/plan.h"
#include "schemas/result.h"

namespace plumb::plans {

/// The plan as JSON, `digest` included as it is in `plan`.
nlohmann::json PlanToJson(const Plan& plan);
/// Reads a plan file's JSON. Rejects other format versions with a clear message. Does not
/// check the digest (see VerifyPlanDigest). A version 1 or 2 plan keeps its JSON (Plan::read_body)
/// and its failed-check actions are read as findings (Plan::health).
Result<Plan> PlanFromJson(const nlohmann::json& j);
/// The digest the plan should carry: SHA-256 over its canonical JSON without "digest".
std::string ComputePlanDigest(const Plan& plan);
/// Sets plan.digest.
void SealPlan(Plan& plan);
/// A sealed plan's file: PlanToJson(plan).dump(2) and a newline, made without building the
/// plan as one tree and written piece by piece. Each node's JSON is made and dumped compact on
/// all cores, hashed for the digest, and indented only as it is written: at 100,000 nodes the
/// file is ~275 MB, which is never held in memory whole.
class PlanFile {
 public:
  /// Seals `plan` (sets plan.digest, as SealPlan does).
  explicit PlanFile(Plan& plan);
  void WriteTo(std::ostream& out) const;
  std::string Text() const;

 private:
  std::string head_;                 // the file up to the nodes' '[' ...
  std::vector<std::string> nodes_;   // ... each node's canonical (compact) JSON ...
  std::string tail_;                 // ... and from their ']' to the end
  bool as_is_ = false;               // an older plan's own JSON, whole in head_
};
/// PlanFile(plan).Text(): SealPlan, then the plan file's text.
std::string SealPlanToFile(Plan& plan);
/// Error "plan.tampered" when the stored digest does not match the content.
Status VerifyPlanDigest(const Plan& plan);

}  // namespace plumb::plans
