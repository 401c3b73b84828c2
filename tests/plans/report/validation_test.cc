// What `plumb validate` says (plans/report/validation): the verdict lines, and the JSON.
#include <doctest/doctest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "plans/report/validation.h"
#include "schemas/exit_codes.h"

using namespace plumb;

namespace {

inventory::LoadedCluster TwoNodes() {
  inventory::LoadedCluster lc;
  lc.cluster.name = "pod-a";
  lc.cluster.source = {"pod-a", "main", "0123456789abcdef0123456789abcdef01234567", false};
  lc.cluster.nodes.resize(2);
  lc.cluster.stacks["h100"];
  return lc;
}

}  // namespace

TEST_CASE("validate: a valid repo's counts, singular and plural, with its warnings") {
  inventory::LoadedCluster lc = TwoNodes();
  std::ostringstream out, err;
  CHECK(plans::report::ShowValidation(lc, "text", out, err) == ExitCodeFor("validate", Outcome::kOk));
  CHECK(out.str() == "valid: cluster pod-a, 2 nodes, 0 groups, 1 stack, 0 rollouts, 0 waivers at "
                     "0123456789ab (ref main)\n");
  CHECK(err.str().empty());

  lc.diags.Add(Diagnostic::Warning("waivers.expired", "a waiver expired"));
  lc.cluster.source.working_tree = true;
  std::ostringstream out2, err2;
  CHECK(plans::report::ShowValidation(lc, "text", out2, err2) == ExitCodeFor("validate", Outcome::kOk));
  CHECK(out2.str() == "valid: cluster pod-a, 2 nodes, 0 groups, 1 stack, 0 rollouts, 0 waivers in the "
                      "working tree of pod-a (HEAD 0123456789ab), 1 warning\n");
  CHECK(err2.str().find("a waiver expired") != std::string::npos);
}

TEST_CASE("validate: an invalid repo says so on stderr, and in JSON") {
  inventory::LoadedCluster lc = TwoNodes();
  lc.diags.Add(Diagnostic::Error("schema.type", "not a string", {"stacks/h100.yaml", 3, 7}));
  std::ostringstream out, err;
  CHECK(plans::report::ShowValidation(lc, "text", out, err) == ExitCodeFor("validate", Outcome::kInvalid));
  CHECK(out.str().empty());
  CHECK(err.str().find("stacks/h100.yaml:3:7") != std::string::npos);
  CHECK(err.str().find("invalid: 1 error, 0 warnings\n") != std::string::npos);

  std::ostringstream json_out, json_err;
  CHECK(plans::report::ShowValidation(lc, "json", json_out, json_err) ==
        ExitCodeFor("validate", Outcome::kInvalid));
  nlohmann::json j = nlohmann::json::parse(json_out.str());
  CHECK(j["valid"] == false);
  CHECK(j["counts"]["nodes"] == 2);
  CHECK(j["errors"] == 1);
  CHECK(j["diagnostics"].size() == 1);
  CHECK(json_err.str().empty());
}
