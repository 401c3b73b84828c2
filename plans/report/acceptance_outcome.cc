#include "plans/report/acceptance_outcome.h"

#include <fmt/format.h>

#include "plans/core/command_output.h"
#include "schemas/validate.h"

namespace plumb::plans::report {

AcceptanceSaid VerifyAcceptanceReport(const std::string& path, const std::optional<std::string>& text) {
  if (!text) return {Outcome::kError, "", "error: cannot read " + path + "\n"};
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_discarded()) return {Outcome::kRefused, "", "error: " + path + " is not JSON\n"};
  // The shape first, then the digest.
  Diagnostics shape;
  if (!schemas::ValidateJson(doc, "acceptance.schema.json", path, schemas::Marks{}, shape))
    return {Outcome::kRefused, "", shape.ToText()};
  Status st = VerifyAcceptanceDigest(doc);
  if (!st.ok())
    return {st.error().code == "acceptance.digest" ? Outcome::kNotVerified : Outcome::kRefused, "",
            st.error().ToString() + "\n"};
  return {Outcome::kOk,
          fmt::format("{}: the digest matches the content ({}; a checksum, not a signature); "
                      "cluster {}, commit {}, {} of {} node(s) passed\n",
                      path, doc.value("digest", ""), doc.value("cluster", ""),
                      doc.value("commit", ""), doc["summary"].value("passed", 0),
                      doc["summary"].value("nodes", 0)),
          ""};
}

AcceptanceSaid AcceptanceSummary(const AcceptanceReport& report, const nlohmann::json& doc,
                                 const std::string& dir) {
  const AcceptanceMeta& m = report.meta;
  std::string out = fmt::format(
      "acceptance {}: {} of {} node(s) passed, {} failed (commit {:.12}, DCGM level {})\n",
      report.Failed() == 0 ? "ACCEPTED" : "REJECTED", report.Passed(), report.nodes.size(),
      report.Failed(), m.commit, m.dcgm_level);
  for (const auto& n : report.nodes)
    for (const std::string& why : n.reasons) out += fmt::format("  {}: {}\n", n.node, why);
  out += fmt::format("report: {}/acceptance.json (digest {}), {}/acceptance.html\n", dir,
                     doc.value("digest", ""), dir);
  return {report.Failed() == 0 ? Outcome::kOk : Outcome::kUnhealthy, out, ""};
}

AcceptanceSaid WriteAcceptanceReport(const AcceptanceReport& report, const std::string& dir,
                                     const WriteText& write) {
  const nlohmann::json doc = AcceptanceToJson(report);
  for (const auto& [file, text] : {std::pair<std::string, std::string>{"acceptance.json", JsonText(doc)},
                                   {"acceptance.html", AcceptanceToHtml(doc)}})
    if (Status s = write(dir + "/" + file, text); !s.ok())
      return {Outcome::kError, "", s.error().ToString() + "\n"};
  return AcceptanceSummary(report, doc, dir);
}

}  // namespace plumb::plans::report
