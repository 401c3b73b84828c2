#include "modules/nccl/parse.h"

#include "modules/module_util.h"
#include "modules/packages/parse.h"

namespace plumb::modules::nccl {

Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts) {
  std::string manager = PackageManagerOf(parts);
  nlohmann::json facts = {{"manager", manager}, {"version", nullptr},
                          {"packages", nlohmann::json::object()}};
  const ProbePart* p = FindPart(parts, "pkgs");
  if (!p || p->absent() || manager == "none") return facts;
  auto pkgs = manager == "rpm" ? packages::ParseRpmQuery(p->text, "nccl")
                               : packages::ParseDpkgQuery(p->text, "nccl");
  if (!pkgs.ok()) return pkgs.error();
  facts["packages"] = packages::PackagesJson(*pkgs);
  for (const char* main : {"libnccl2", "libnccl"})
    if (const auto* e = Lookup(facts["packages"], {main, "version"}); e && e->is_string()) {
      std::string v = e->get<std::string>();
      // rpm prints no epoch for NCCL; a dpkg epoch would be part of the pin anyway.
      facts["version"] = v;
    }
  return facts;
}

}  // namespace plumb::modules::nccl
