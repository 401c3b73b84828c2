#pragma once
/// What `plumb acceptance` and `plumb acceptance verify` say when they end: the verdict on a
/// report file (its shape, then its digest) and the summary of a report just written. cmd/
/// prints them and maps the outcome to the "acceptance" rows of the exit code table. Tested in
/// tests/plans/report/acceptance_outcome_test.cc.
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "plans/report/acceptance.h"
#include "schemas/exit_codes.h"

namespace plumb::plans::report {

/// An outcome and what to print for it.
struct AcceptanceSaid {
  Outcome outcome = Outcome::kOk;
  std::string out;   ///< for stdout
  std::string err;   ///< for stderr
};

/// `acceptance verify` of the report at `path` whose text is `text` (nullopt: it could not be
/// read, kError): not JSON or not of acceptance.schema.json's shape is kRefused (a report this
/// plumb cannot read is refused, not "verified"); a digest that does not match kNotVerified.
AcceptanceSaid VerifyAcceptanceReport(const std::string& path, const std::optional<std::string>& text);

/// The lines `plumb acceptance` ends with: ACCEPTED or REJECTED with the counts, each failed
/// node's reasons, and where the report is (`doc` is `report` as written, digest and all).
/// kOk when every node passed, else kUnhealthy.
AcceptanceSaid AcceptanceSummary(const AcceptanceReport& report, const nlohmann::json& doc,
                                 const std::string& dir);

/// Writes `report` into `dir` - acceptance.json (with its digest) and acceptance.html - with
/// `write`, then sums it up (AcceptanceSummary); a file that cannot be written is kError, its
/// error for stderr.
using WriteText = std::function<Status(const std::string& path, const std::string& text)>;
AcceptanceSaid WriteAcceptanceReport(const AcceptanceReport& report, const std::string& dir,
                                     const WriteText& write);

}  // namespace plumb::plans::report
