// What `plumb validate` says (plans/report/validation.h).
#include "plans/report/validation.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "schemas/exit_codes.h"

namespace plumb::plans::report {

namespace {

std::string Counted(size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

nlohmann::json ValidationJson(const inventory::LoadedCluster& lc) {
  const auto& c = lc.cluster;
  return {
      {"valid", lc.ok()},
      {"repo", c.source.repo},
      {"ref", c.source.ref},
      {"commit", c.source.commit},
      {"working_tree", c.source.working_tree},
      {"cluster", c.name},
      {"counts",
       {{"nodes", c.nodes.size()}, {"groups", c.groups.size()}, {"stacks", c.stacks.size()},
        {"rollouts", c.rollouts.size()}, {"waivers", c.waivers.size()}}},
      {"errors", lc.diags.ErrorCount()},
      {"warnings", lc.diags.WarningCount()},
      {"diagnostics", lc.diags.ToJson()},
  };
}

}  // namespace

int ShowValidation(const inventory::LoadedCluster& lc, const std::string& format, std::ostream& out,
                   std::ostream& err) {
  if (format == "json") {
    out << ValidationJson(lc).dump(2) << "\n";
    return ExitCodeFor("validate", lc.ok() ? Outcome::kOk : Outcome::kInvalid);
  }
  err << lc.diags.ToText();
  const size_t errors = lc.diags.ErrorCount(), warnings = lc.diags.WarningCount();
  if (!lc.ok()) {
    err << "invalid: " << Counted(errors, "error", "errors") << ", "
        << Counted(warnings, "warning", "warnings") << "\n";
    return ExitCodeFor("validate", Outcome::kInvalid);
  }
  const auto& c = lc.cluster;
  std::string at = fmt::format("at {} (ref {})", c.source.commit.substr(0, 12), c.source.ref);
  if (c.source.working_tree) {
    at = fmt::format("in the working tree of {} ({})", c.source.repo,
                     c.source.commit.empty() ? "not a git repository"
                                             : "HEAD " + c.source.commit.substr(0, 12));
  }
  out << fmt::format("valid: cluster {}, {}, {}, {}, {}, {} {}{}\n", c.name,
                     Counted(c.nodes.size(), "node", "nodes"), Counted(c.groups.size(), "group", "groups"),
                     Counted(c.stacks.size(), "stack", "stacks"),
                     Counted(c.rollouts.size(), "rollout", "rollouts"),
                     Counted(c.waivers.size(), "waiver", "waivers"), at,
                     warnings ? ", " + Counted(warnings, "warning", "warnings") : "");
  return ExitCodeFor("validate", Outcome::kOk);
}

}  // namespace plumb::plans::report
