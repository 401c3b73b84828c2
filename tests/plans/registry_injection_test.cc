// plans/ asks the registry it is given, not the global module table: with fake modules, the
// fakes' rules are the ones used (which modules are health checks, who owns a key and how
// much changing it disturbs, which module names the boot id, the applied commit, the firmware
// inventory, the charted measurement, which read the BMC).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "modules/registry.h"
#include "plans/observe/observed.h"
#include "plans/observe/plan_run.h"
#include "plans/plan/keys.h"
#include "plans/report/acceptance.h"
#include "plans/report/drift.h"
#include "plans/report/report_fixture.h"
#include "plans/watch/kept_facts.h"

using namespace plumb;
using nlohmann::json;

namespace {

class DescribedModule : public modules::Module {
 public:
  explicit DescribedModule(modules::ModuleInfo info) : info_(std::move(info)) {}
  const modules::ModuleInfo& Info() const override { return info_; }
  std::vector<modules::Action> Diff(const json&, const modules::Facts&) const override { return {}; }

 private:
  modules::ModuleInfo info_;
};

const DescribedModule kFakeHealth({.name = "fake_health", .owns = {"/fake_health"},
                              .kind = modules::ModuleInfo::Kind::kHealth});
const DescribedModule kFakeReboot({.name = "fake_reboot", .owns = {"/fake"},
                              .disruption = modules::Disruption::kReboot});
const DescribedModule kFakeOnDemand({.name = "fake_on_demand", .owns = {"/fake_check"},
                                .kind = modules::ModuleInfo::Kind::kHealth, .on_demand = true});
// Owns the sysctl keys of the report fixture, and reads them through the BMC.
const DescribedModule kFakeBmc({.name = "fake_bmc", .owns = {"/sysctl"}, .channel = modules::Channel::kBmc});
const DescribedModule kFakeBoot({.name = "fake_boot", .boot_id_key = "boot"});
const DescribedModule kFakeMarker({.name = "fake_marker", .applied_commit_key = "at"});
const DescribedModule kFakeInventory({.name = "fake_inventory", .firmware_inventory_key = "parts"});
const DescribedModule kFakeChart({.name = "fake_chart", .kind = modules::ModuleInfo::Kind::kHealth,
                             .acceptance_chart = true});

const modules::Registry& InjectedRegistry() {
  static const modules::Registry r({&kFakeHealth, &kFakeReboot, &kFakeOnDemand, &kFakeBmc, &kFakeBoot,
                                    &kFakeMarker, &kFakeInventory, &kFakeChart});
  return r;
}

}  // namespace

TEST_CASE("registry injection: FactsDigest leaves out the facts of the given registry's health modules") {
  std::map<std::string, Result<modules::Facts>> a, b;
  a.emplace("fake_health", Result<modules::Facts>(json{{"ecc", 0}}));
  b.emplace("fake_health", Result<modules::Facts>(json{{"ecc", 7}}));
  CHECK(plans::FactsDigest(a, InjectedRegistry()) == plans::FactsDigest(b, InjectedRegistry()));
  // The real modules know no fake_health: its facts count there.
  CHECK(plans::FactsDigest(a) != plans::FactsDigest(b));
}

TEST_CASE("registry injection: KeyDisruption is the given registry's owner's") {
  CHECK(plans::KeyDisruption("/fake/x", InjectedRegistry()) == modules::Disruption::kReboot);
  CHECK(plans::KeyDisruption("/fake/x") == modules::Disruption::kNone);   // no real module owns it
  CHECK(plans::KeyDisruption("/kernel", InjectedRegistry()) == modules::Disruption::kNone);
  CHECK(plans::KeyDisruption("/kernel") == modules::Disruption::kReboot);
}

TEST_CASE("registry injection: a key only the given registry's on-demand check reads is not 'unchecked'") {
  plans::DesiredByNode desired;
  desired["n1"].desired = json{{"fake_check", {{"min", 1}}}};
  CHECK_FALSE(plans::UncheckedKeysWarning(desired, {}, InjectedRegistry()).has_value());
  auto real = plans::UncheckedKeysWarning(desired, {});
  REQUIRE(real.has_value());
  CHECK(real->message.find("fake_check") != std::string::npos);
}

TEST_CASE("registry injection: drift's owner of a key comes from the given registry") {
  testing::ReportWorld w;
  plans::report::DriftInput in;
  in.plan = &w.plan;
  in.cluster = &w.cluster;
  in.desired = &w.desired;
  in.today = "2026-11-29";
  in.registry = &InjectedRegistry();
  plans::report::DriftReport r = plans::report::MakeDriftReport(in);
  std::set<std::string> modules;   // of gpu003, in sync: no planned action names a module
  for (const auto& n : r.nodes)
    if (n.node == "gpu003")
      for (const auto& c : n.checks) modules.insert(c.module());
  CHECK(modules.count("fake_bmc"));     // sysctl keys: the fake owns them
  CHECK_FALSE(modules.count("sysctl"));
  CHECK(modules.count(""));             // kernel: no fake owns it
}

TEST_CASE("registry injection: boot id and applied commit come from the modules that declare them") {
  plans::NodeObservation o;
  o.reachable = true;
  o.facts.emplace("fake_boot", Result<modules::Facts>(json{{"boot", "b9"}}));
  o.facts.emplace("kernel", Result<modules::Facts>(json{{"boot_id", "b1"}}));
  CHECK(plans::watch::BootIdOf(o, {&kFakeBoot}) == "b9");
  CHECK(plans::watch::BootIdOf(o, {&kFakeHealth}).empty());
  CHECK(plans::watch::BootIdOf(o, modules::AllModules()) == "b1");
}

TEST_CASE("registry injection: acceptance asks the registry which modules read the BMC, list firmware, are charted") {
  testing::ReportWorld w;
  plans::report::DriftInput in;
  in.plan = &w.plan;
  in.cluster = &w.cluster;
  in.desired = &w.desired;
  in.today = "2026-11-29";
  in.modules_run = {"kernel"};   // the sysctl pins were not read
  in.registry = &InjectedRegistry();
  plans::report::DriftReport drift = plans::report::MakeDriftReport(in);
  plans::ObservedState observed;
  plans::NodeObservation o;
  o.node = "gpu003";
  o.reachable = true;
  o.facts.emplace("fake_inventory", Result<modules::Facts>(json{{"parts", {{{"name", "BMC"}, {"version", "9.9"}}}}}));
  observed.nodes.emplace("gpu003", o);
  plans::NodeHealth h;
  h.node = "gpu003";
  h.modules = {"fake_chart"};
  h.checks.push_back({"fake_chart", "fake_chart.bw", "bandwidth", "", modules::CheckStatus::kPass, 123.0,
                      {{"min", 100}}, ""});
  auto fake = plans::report::MakeAcceptanceReport({}, drift, observed, {h}, InjectedRegistry());
  auto real = plans::report::MakeAcceptanceReport({}, drift, observed, {h});
  const plans::report::AcceptanceNode* n3 = nullptr;
  for (const auto& n : fake.nodes)
    if (n.node == "gpu003") n3 = &n;
  REQUIRE(n3 != nullptr);
  CHECK(n3->firmware == json::array({{{"name", "BMC"}, {"version", "9.9"}}}));
  bool bmc_reason = false;
  for (const std::string& r : n3->reasons) bmc_reason |= r.find("the BMC was not read") != std::string::npos;
  CHECK(bmc_reason);
  for (const auto& n : real.nodes) {
    if (n.node != "gpu003") continue;
    CHECK(n.firmware.is_null());   // no real module lists fake_inventory's parts
    for (const std::string& r : n.reasons) CHECK(r.find("the BMC was not read") == std::string::npos);
  }
  const json doc = plans::report::AcceptanceToJson(fake);
  CHECK(plans::report::AcceptanceToHtml(doc, InjectedRegistry()).find("No NCCL bandwidth was measured") == std::string::npos);
  CHECK(plans::report::AcceptanceToHtml(doc).find("No NCCL bandwidth was measured") != std::string::npos);
}
