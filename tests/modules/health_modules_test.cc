// The health modules (dcgm, gpu_health, nccl_bw, ib_health) through the module contract: Checks
// and Diff as tables over the parser fixtures (tests/data/<module>), thresholds from the desired
// state, Apply's refusal, and each snippet run under the local /bin/sh against fake tools.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "modules/check_result.h"
#include "modules/dcgm/dcgm.h"
#include "modules/facts_schema.h"
#include "modules/fixtures.h"
#include "modules/gpu_health/parse.h"
#include "modules/health_util.h"
#include "modules/nccl_bw/nccl_bw.h"
#include "modules/registry.h"

using nlohmann::json;
using namespace plumb::modules;
using plumb::testing::FactsSchema;
using plumb::testing::MakeParts;
using plumb::testing::PartSpec;

namespace {

const Module& M(const char* name) {
  const Module* m = FindModule(name);
  REQUIRE_MESSAGE(m != nullptr, name);
  return *m;
}

// The module's facts from these parts, checked against its facts schema on the way.
Facts FactsOf(const char* module, const std::vector<PartSpec>& parts) {
  auto f = M(module).ParseProbe(FrameParts(MakeParts(parts)), 0);
  REQUIRE_MESSAGE(f.ok(), f.error().message);
  FactsSchema schema(module);
  CHECK_MESSAGE(schema.Errors(*f).empty(), schema.Errors(*f) << f->dump());
  return *f;
}

json Desired(const char* module, json settings) { return {{"health", {{module, std::move(settings)}}}}; }

std::set<std::string> With(const std::vector<CheckResult>& checks, CheckStatus s) {
  std::set<std::string> out;
  for (const auto& c : checks)
    if (c.status == s) out.insert(c.id);
  return out;
}
std::set<std::string> Failing(const std::vector<CheckResult>& checks) { return With(checks, CheckStatus::kFail); }

bool HasCheck(const std::vector<CheckResult>& checks, const std::string& id) {
  return std::any_of(checks.begin(), checks.end(), [&](const CheckResult& c) { return c.id == id; });
}

const CheckResult& Find(const std::vector<CheckResult>& checks, const std::string& id) {
  for (const auto& c : checks)
    if (c.id == id) return c;
  std::string ids;
  for (const auto& c : checks) ids += c.id + " ";
  FAIL("no check " << id << " in: " << ids);
  throw std::logic_error("unreachable");
}

// A failed check is a finding, not a change: Diff is empty whatever failed, CheckFacts gives
// the checks themselves, and Apply refuses anything it is handed.
void CheckFindingsNotActions(const Module& m, const json& desired, const Facts& facts) {
  auto checks = m.Checks(desired, facts);
  CHECK_FALSE(Failing(checks).empty());   // the case has something that failed...
  CHECK(m.Diff(desired, facts).empty());  // ...and nothing to apply
  auto via = CheckFacts(m, desired, facts);
  REQUIRE(via.ok());
  REQUIRE(via->size() == checks.size());
  for (size_t i = 0; i < checks.size(); ++i) CHECK(via->at(i).ToJson() == checks[i].ToJson());
  Action a;
  a.module = std::string(m.Name());
  a.id = checks.front().id;
  a.summary = "anything";
  NodeContext ctx;
  ApplyOutcome o = m.Apply(ctx, a);
  CHECK(o.kind == ApplyOutcome::Kind::kFailed);
  CHECK(o.failure.code == "apply.health");
  CHECK_FALSE(o.failure.hint.empty());
}

// Checks that throw as malformed facts would make them.
class ThrowingHealth final : public HealthModule {
 public:
  ThrowingHealth() : HealthModule(nullptr) {}
  const ModuleInfo& Info() const override { return M("gpu_health").Info(); }
  std::vector<CheckResult> Checks(const json&, const Facts& facts) const override {
    (void)facts.at("gpus").get<std::string>();   // a type error on facts of another shape
    return {};
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// The shared rules

TEST_CASE("health modules: registry rows, on demand or gathered, nothing to apply") {
  for (const char* name : {"dcgm", "gpu_health", "nccl_bw", "ib_health"}) {
    CAPTURE(name);
    const ModuleInfo& i = M(name).Info();
    CHECK(i.kind == ModuleInfo::Kind::kHealth);
    CHECK(i.disruption == Disruption::kNone);
    REQUIRE(i.owns.size() == 1);
    CHECK(i.owns[0] == "/health/" + std::string(name));
    CHECK(i.changes.find("nothing") == 0);
    const bool on_demand = std::string(name) == "dcgm" || std::string(name) == "nccl_bw";
    CHECK(i.on_demand == on_demand);
    // On demand: a check script, no probe (gather stays cheap). Gathered: the other way round.
    CHECK(M(name).ProbeScript().empty() == on_demand);
    CHECK(M(name).CheckScript(Desired(name, {{"x", 1}})).empty() == !on_demand);
    // Not pinned: no checks, no actions, whatever the facts.
    CHECK(M(name).Checks(json::object(), json::object()).empty());
    CHECK(M(name).Diff({{"health", {{name, json::object()}}}}, json::object()).empty());
  }
}

TEST_CASE("health util: malformed facts are an error, not an exception; settings are read defensively") {
  ThrowingHealth bad;
  auto r = CheckFacts(bad, Desired("gpu_health", {{"max_uncorrected_ecc", 0}}), json{{"gpus", 3}});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "facts.malformed");
  CHECK(r.error().message.find("gpu_health facts do not read") != std::string::npos);

  json s = {{"n", 5}, {"big", 1LL << 50}, {"neg", -1}, {"f", 2.5}, {"t", true}, {"str", "7"}};
  CHECK(IntSetting(s, "n", 0, 10) == 5);
  CHECK_FALSE(IntSetting(s, "n", 6, 10).has_value());
  CHECK_FALSE(IntSetting(s, "big", 0, 1000).has_value());
  CHECK_FALSE(IntSetting(s, "neg", 0, 10).has_value());
  CHECK_FALSE(IntSetting(s, "str", 0, 10).has_value());
  CHECK_FALSE(IntSetting(s, "f", 0, 10).has_value());
  CHECK(NumberSetting(s, "f") == 2.5);
  CHECK_FALSE(NumberSetting(s, "neg").has_value());
  CHECK(BoolSetting(s, "t", false));
  CHECK(BoolSetting(s, "n", true));
  CHECK(HealthSettings({{"health", 3}}, "dcgm") == json::object());
  CHECK(HealthSettings({{"health", {{"dcgm", {{"level", 2}}}}}}, "dcgm") == json{{"level", 2}});
  CHECK(CheckIdSegment("GPU Memory") == "gpu_memory");
  CHECK(CheckIdSegment("Page Retirement/Row Remap") == "page_retirement_row_remap");
  CHECK(CheckIdSegment("PCIe") == "pcie");
  CHECK(FormatNumber(220.61) == "220.61");
  CHECK(FormatNumber(350) == "350");
  CHECK(FormatNumber(0.5) == "0.5");
}

// ---------------------------------------------------------------------------------------------
// dcgm

namespace {

std::vector<PartSpec> Dcgm(const std::string& diag, int diag_status = 0,
                           const std::string& discovery = "@dcgm/discovery-8xh800-dcgm318.txt", int disc_status = 0) {
  return {{"discovery", discovery, disc_status}, {"diag", diag, diag_status}};
}

// A DCGM 3.x document with one test and the given per-GPU statuses.
std::string Dcgm3Doc(const std::vector<std::string>& statuses) {
  json results = json::array();
  for (size_t i = 0; i < statuses.size(); ++i) {
    json r = {{"gpu_id", std::to_string(i)}, {"status", statuses[i]}};
    if (statuses[i] != "Pass")
      r["warnings"] = {{{"warning", "GPU " + std::to_string(i) + " PCIe replay rate is high."}, {"error_id", 23}}};
    results.push_back(r);
  }
  return json{{"DCGM GPU Diagnostic",
               {{"test_categories", {{{"category", "Integration"}, {"tests", {{{"name", "PCIe"}, {"results", results}}}}}}},
                {"version", "3.3.5"}}}}
      .dump();
}

}  // namespace

TEST_CASE("dcgm checks: a passing node, a failing GPU, warnings, the run that could not run") {
  const Module& dcgm = M("dcgm");
  const json level1 = {{"health", {{"dcgm", {{"level", 1}}}, {"gpu_health", {{"expected_gpus", 8}}}}}};

  SUBCASE("every result passed: one overall pass, the GPU count, no action") {
    Facts f = FactsOf("dcgm", Dcgm("@dcgm/diag-r1-dcgm3-8xh100-pass.json"));
    auto checks = dcgm.Checks(level1, f);
    CHECK(Failing(checks).empty());
    CHECK(With(checks, CheckStatus::kWarn).empty());
    CHECK(With(checks, CheckStatus::kPass) == std::set<std::string>{"dcgm.diag", "dcgm.gpu_count"});
    CHECK(Find(checks, "dcgm.diag").message.find("level 1: 9 results passed") == 0);
    CHECK(dcgm.Diff(level1, f).empty());
  }
  struct Fault {
    const char* fixture;
    const char* id;
    const char* name;
    const char* message;
  };
  for (const Fault& r : std::vector<Fault>{
           {"@dcgm/diag-r3-dcgm3-memory-fail-gpu3.json", "dcgm.gpu_memory.gpu3", "DCGM GPU Memory",
            "GPU 3 had uncorrectable memory errors and row remapping failed."},
           {"@dcgm/diag-r2-dcgm4-memory-fail-gpu3.json", "dcgm.memory.gpu3", "DCGM memory", ""},
       }) {
    CAPTURE(r.fixture);
    Facts f = FactsOf("dcgm", Dcgm(r.fixture, 226));
    auto checks = dcgm.Checks(level1, f);
    CHECK(Failing(checks) == std::set<std::string>{r.id});
    const CheckResult& c = Find(checks, r.id);
    CHECK(c.name == r.name);
    CHECK(c.subject == "GPU 3");
    CHECK(c.measured == "fail");
    CHECK(c.threshold == "pass");
    if (*r.message) CHECK(c.message == r.message);
    CHECK_FALSE(c.message.empty());
    CheckFindingsNotActions(dcgm, level1, f);
  }
  SUBCASE("a warning warns; fail_on_warn makes it fail") {
    Facts f = FactsOf("dcgm", Dcgm(Dcgm3Doc({"Pass", "Warn", "Pass"})));
    auto checks = dcgm.Checks(Desired("dcgm", {{"level", 1}}), f);
    CHECK(Failing(checks).empty());
    CHECK(With(checks, CheckStatus::kWarn) == std::set<std::string>{"dcgm.pcie.gpu1"});
    CHECK(Find(checks, "dcgm.pcie.gpu1").message == "GPU 1 PCIe replay rate is high.");
    CHECK(dcgm.Diff(Desired("dcgm", {{"level", 1}}), f).empty());
    const json strict = Desired("dcgm", {{"level", 1}, {"fail_on_warn", true}});
    CHECK(Failing(dcgm.Checks(strict, f)) == std::set<std::string>{"dcgm.pcie.gpu1"});
    CheckFindingsNotActions(dcgm, strict, f);
  }
  SUBCASE("a 4.x persistence-mode failure on a GB10") {
    Facts f = FactsOf("dcgm", Dcgm("@dcgm/diag-r1-dcgm4-gb10-persistence-fail.json", 226));
    CHECK(Failing(dcgm.Checks(level1, f)) == std::set<std::string>{"dcgm.software.gpu0"});
  }
  SUBCASE("DCGM could not run the diagnostic") {
    Facts f = FactsOf("dcgm", Dcgm("@dcgm/diag-dcgm3-runtime-error.json", 237));
    auto checks = dcgm.Checks(level1, f);
    CHECK(Failing(checks) == std::set<std::string>{"dcgm.runtime_error"});
    CHECK(Find(checks, "dcgm.runtime_error").message ==
          "dcgmi diag -r 1 could not run: Error: Diagnostic could not be run while DCGM is paused.");
    CheckFindingsNotActions(dcgm, level1, f);
  }
  SUBCASE("no host engine: diag ran an embedded one, discovery could not") {
    Facts f = FactsOf("dcgm", Dcgm("@dcgm/diag-r1-dcgm3-8xh100-pass.json", 0, "@dcgm/hostengine-unreachable.txt", 1));
    auto checks = dcgm.Checks(level1, f);
    CHECK(Failing(checks) == std::set<std::string>{"dcgm.discovery.unread"});
    CHECK(Find(checks, "dcgm.discovery.unread").message.find("Unable to connect to host engine") != std::string::npos);
    CHECK(Find(checks, "dcgm.diag").status == CheckStatus::kPass);
  }
  SUBCASE("killed by the timeout, dcgmi missing, the GPU count") {
    Facts killed = FactsOf("dcgm", Dcgm("@dcgm/diag-truncated.json", 124));
    auto checks = dcgm.Checks(level1, killed);
    CHECK(Failing(checks) == std::set<std::string>{"dcgm.diag.unread"});
    CHECK(Find(checks, "dcgm.diag.unread").message.find("killed (exit 124)") != std::string::npos);

    Facts absent = FactsOf("dcgm", Dcgm("plumb-absent: dcgmi\n", 127, "plumb-absent: dcgmi\n", 127));
    CHECK(Failing(dcgm.Checks(level1, absent)) == std::set<std::string>{"dcgm.installed"});

    Facts pass = FactsOf("dcgm", Dcgm("@dcgm/diag-r1-dcgm3-8xh100-pass.json"));
    json four = level1;
    four["health"]["gpu_health"]["expected_gpus"] = 4;
    auto counted = dcgm.Checks(four, pass);
    CHECK(Failing(counted) == std::set<std::string>{"dcgm.gpu_count"});
    CHECK(Find(counted, "dcgm.gpu_count").message == "DCGM sees 8 GPUs, expected 4");
    CHECK(Find(counted, "dcgm.gpu_count").threshold == json{{"equals", 4}});
    // Without expected_gpus the count is not a check.
    CHECK_FALSE(With(dcgm.Checks(Desired("dcgm", {{"level", 1}}), pass), CheckStatus::kPass).count("dcgm.gpu_count"));
  }
}

TEST_CASE("dcgm check script: level and timeout from desired, quoted") {
  const Module& dcgm = M("dcgm");
  struct Row {
    json settings;
    const char* expect;
  };
  for (const Row& r : std::vector<Row>{
           {{{"level", 1}}, "plumb_run discovery dcgmi discovery -l\nplumb_run_for '120' diag dcgmi diag -r '1' -j"},
           {{{"level", 2}}, "plumb_run_for '600' diag dcgmi diag -r '2' -j"},
           {{{"level", 3}}, "plumb_run_for '1800' diag dcgmi diag -r '3' -j"},
           {{{"level", 4}}, "plumb_run_for '7200' diag dcgmi diag -r '4' -j"},
           {{{"level", 3}, {"timeout_s", 2400}}, "plumb_run_for '2400' diag dcgmi diag -r '3' -j"},
           // Values validate refuses fall back to the defaults, never reach the node.
           {{{"level", 7}, {"timeout_s", "1; reboot"}}, "plumb_run_for '120' diag dcgmi diag -r '1' -j"},
           {{{"level", "2; reboot"}}, "plumb_run_for '120' diag dcgmi diag -r '1' -j"},
       }) {
    CAPTURE(r.settings.dump());
    std::string script = dcgm.CheckScript(Desired("dcgm", r.settings));
    CHECK_MESSAGE(script.find(r.expect) != std::string::npos, script);
    CHECK(script.find("reboot") == std::string::npos);
  }
  CHECK(dcgm::Level(Desired("dcgm", {{"level", 4}})) == 4);
  CHECK(dcgm::TimeoutSeconds(Desired("dcgm", {{"level", 2}})) == 600);
}

// ---------------------------------------------------------------------------------------------
// gpu_health

namespace {

std::vector<PartSpec> Gpus(const std::string& smi, const std::string& kmsg = "@gpu_health/dmesg-no-xid.txt",
                           int smi_status = 0, int kmsg_status = 0) {
  return {{"smi", smi, smi_status}, {"kmsg", kmsg, kmsg_status}};
}

}  // namespace

TEST_CASE("gpu_health checks: a healthy node, then one fault at a time") {
  const Module& gh = M("gpu_health");
  const json desired = Desired("gpu_health", {{"expected_gpus", 8}});
  const Facts healthy = FactsOf("gpu_health", Gpus("@gpu_health/smi-health-8xh100.txt"));

  auto checks = gh.Checks(desired, healthy);
  CHECK(Failing(checks).empty());
  CHECK(With(checks, CheckStatus::kWarn).empty());
  CHECK(With(checks, CheckStatus::kSkip).empty());
  CHECK(Find(checks, "gpu_health.gpu_count").status == CheckStatus::kPass);
  CHECK(Find(checks, "gpu_health.xid").message == "no XID since boot");
  for (int g = 0; g < 8; ++g)
    for (const char* c : {"ecc_mode", "ecc", "remap_pending", "remap_failure", "throttle"})
      CHECK(Find(checks, fmt::format("gpu_health.gpu{}.{}", g, c)).status == CheckStatus::kPass);
  CHECK(gh.Diff(desired, healthy).empty());

  // Each fault, made in the healthy facts: exactly one failing check, measured vs allowed.
  struct Fault {
    const char* what;
    const char* pointer;
    json value;
    const char* id;
    json measured;
    json threshold;
    const char* message;
  };
  const json forbidden_xids = {48, 63, 64, 74, 79, 92, 94, 95};
  for (const Fault& r : std::vector<Fault>{
           {"an ECC error", "/gpus/2/uncorrected_volatile", 1, "gpu_health.gpu2.ecc", 1, {{"max", 0}},
            "1 uncorrected ECC errors since the driver loaded > 0"},
           {"a remap pending", "/gpus/4/remapped_rows_pending", true, "gpu_health.gpu4.remap_pending", true,
            {{"allowed", false}}, "a row remap is pending: reset the GPU (or reboot) to take the bad memory out of use"},
           {"a remap failure", "/gpus/4/remapped_rows_failure", true, "gpu_health.gpu4.remap_failure", true,
            {{"allowed", false}}, "row remapping failed: the GPU has run out of spare rows (RMA)"},
           {"ECC off", "/gpus/1/ecc_enabled", false, "gpu_health.gpu1.ecc_mode", "disabled", "enabled",
            "ECC is disabled (nvidia-smi -e 1, then a GPU reset)"},
           {"a thermal slowdown", "/gpus/7/throttle_reasons", {"hw_thermal_slowdown"}, "gpu_health.gpu7.throttle",
            {"hw_thermal_slowdown"}, {{"forbidden", {"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"}}},
            "throttled by hw_thermal_slowdown"},
           {"a GPU missing", "/gpu_count", 7, "gpu_health.gpu_count", 7, {{"equals", 8}}, "nvidia-smi lists 7 GPUs, expected 8"},
           {"an XID 79", "/xids", {{{"xid", 79}, {"pci", "0000:5d:00"}, {"bus_id", "00000000:5D:00.0"}, {"gpu", 3},
                                    {"pid", nullptr}, {"process", nullptr}, {"message", "GPU has fallen off the bus."}, {"line", 1}}},
            "gpu_health.xid79.gpu3", 1, {{"forbidden", forbidden_xids}}, "1 time since boot: GPU has fallen off the bus."},
       }) {
    CAPTURE(r.what);
    Facts f = healthy;
    f[json::json_pointer(r.pointer)] = r.value;
    if (std::string(r.pointer) == "/xids") f["xid_counts"] = {{"79", 1}};
    auto got = gh.Checks(desired, f);
    CHECK(Failing(got) == std::set<std::string>{r.id});
    const CheckResult& c = Find(got, r.id);
    CHECK(c.measured == r.measured);
    CHECK(c.threshold == r.threshold);
    CHECK(c.message == r.message);
    CheckFindingsNotActions(gh, desired, f);
  }
}

TEST_CASE("gpu_health checks: the failing fixture, and the thresholds that let it pass") {
  const Module& gh = M("gpu_health");
  const Facts f = FactsOf("gpu_health", Gpus("@gpu_health/smi-health-8xh100-failing.txt", "@gpu_health/dmesg-xid79-h100.txt"));
  const json defaults = Desired("gpu_health", {{"expected_gpus", 8}});
  auto checks = gh.Checks(defaults, f);
  CHECK(Failing(checks) == std::set<std::string>{"gpu_health.gpu3.ecc", "gpu_health.gpu3.remap_pending",
                                                 "gpu_health.gpu5.remap_failure", "gpu_health.gpu5.throttle",
                                                 "gpu_health.gpu6.ecc_mode", "gpu_health.gpu7.ecc",
                                                 "gpu_health.xid79.gpu3"});
  CHECK(Find(checks, "gpu_health.gpu5.throttle").message == "throttled by hw_slowdown, hw_thermal_slowdown");
  CHECK(Find(checks, "gpu_health.gpu7.ecc").message ==
        "nvidia-smi gives [Unknown Error] for ecc.errors.uncorrected.volatile.total");
  CHECK(Find(checks, "gpu_health.gpu6.ecc").status == CheckStatus::kSkip);   // no counts with ECC off
  CHECK(Find(checks, "gpu_health.gpu6.throttle").message == "active: sw_power_cap (allowed)");
  CheckFindingsNotActions(gh, defaults, f);
  CHECK(Find(checks, "gpu_health.xid79.gpu3").subject == "GPU 3");
  CHECK(Find(checks, "gpu_health.xid79.gpu3").message == "1 time since boot: GPU has fallen off the bus.");

  // Raise every threshold: the remaining faults warn or pass.
  const json lenient = Desired("gpu_health", {{"expected_gpus", 8},
                                              {"max_uncorrected_ecc", 2},
                                              {"require_ecc", false},
                                              {"allow_remap_pending", true},
                                              {"allow_remap_failure", true},
                                              {"forbid_xids", json::array()},
                                              {"forbid_throttle", {"sw_thermal_slowdown"}}});
  auto relaxed = gh.Checks(lenient, f);
  CHECK(Failing(relaxed) == std::set<std::string>{"gpu_health.gpu7.ecc"});   // nvidia-smi cannot read it
  CHECK(With(relaxed, CheckStatus::kWarn) ==
        std::set<std::string>{"gpu_health.gpu3.remap_pending", "gpu_health.gpu5.remap_failure", "gpu_health.xid79.gpu3"});
  CHECK(Find(relaxed, "gpu_health.xid79.gpu3").message.find("(not in forbid_xids: a warning)") != std::string::npos);
  CHECK_FALSE(HasCheck(relaxed, "gpu_health.gpu6.ecc_mode"));

  // The lifetime count is checked only when asked.
  CHECK_FALSE(HasCheck(checks, "gpu_health.gpu5.ecc_aggregate"));
  auto lifetime = gh.Checks(Desired("gpu_health", {{"max_aggregate_uncorrected_ecc", 2}}), f);
  CHECK(Find(lifetime, "gpu_health.gpu5.ecc_aggregate").status == CheckStatus::kFail);
  CHECK(Find(lifetime, "gpu_health.gpu5.ecc_aggregate").message == "3 uncorrected ECC errors over the GPU's life > 2");
  CHECK(Find(lifetime, "gpu_health.gpu3.ecc_aggregate").status == CheckStatus::kPass);
}

TEST_CASE("gpu_health checks: XIDs by code and GPU, unread logs and nvidia-smi failures never pass") {
  const Module& gh = M("gpu_health");
  const json desired = Desired("gpu_health", {{"max_uncorrected_ecc", 0}});
  // No nvidia-smi part: XIDs are named by their PCI address.
  Facts variants = FactsOf("gpu_health", {{"kmsg", "@gpu_health/kmsg-xid-variants.txt"}});
  auto checks = gh.Checks(desired, variants);
  CHECK(Failing(checks).count("gpu_health.xid94.pci_0000_9b_00"));
  CHECK(Find(checks, "gpu_health.xid94.pci_0000_9b_00").subject == "PCI 0000:9b:00");
  CHECK(Find(checks, "gpu_health.xid31.pci_0000_08_00").status == CheckStatus::kWarn);
  CHECK(Find(checks, "gpu_health.nvml").status == CheckStatus::kFail);   // nvidia-smi never answered

  struct Row {
    std::vector<PartSpec> parts;
    std::set<std::string> failing;
    const char* id;
    const char* message;
  };
  for (const Row& r : std::vector<Row>{
           {Gpus("@gpu_health/smi-health-8xh100.txt", "@gpu_health/dmesg-restricted.txt", 0, 1),
            {"gpu_health.kmsg.unread"}, "gpu_health.kmsg.unread", "could not be read in line 1"},
           {Gpus("@gpu_health/smi-health-8xh100.txt", "plumb-absent: dmesg\n", 0, 127),
            {"gpu_health.xid"}, "gpu_health.xid", "the kernel log was not read (neither dmesg nor journalctl is installed)"},
           {Gpus("plumb-absent: nvidia-smi\n", "@gpu_health/dmesg-no-xid.txt", 127),
            {"gpu_health.nvml"}, "gpu_health.nvml", "nvidia-smi is not installed"},
           {Gpus("@nvidia_driver/smi-no-driver.txt", "@gpu_health/dmesg-no-xid.txt", 9),
            {"gpu_health.nvml"}, "gpu_health.nvml", "nvidia-smi failed: no-driver"},
           {Gpus("@gpu_health/smi-health-truncated.txt", "@gpu_health/dmesg-no-xid.txt", 124),
            {"gpu_health.smi.unread"}, "gpu_health.smi.unread", "killed (exit 124)"},
       }) {
    Facts f = FactsOf("gpu_health", r.parts);
    auto got = gh.Checks(desired, f);
    CHECK(Failing(got) == r.failing);
    CHECK_MESSAGE(Find(got, r.id).message.find(r.message) != std::string::npos, Find(got, r.id).message);
    CheckFindingsNotActions(gh, desired, f);
  }
}

// ---------------------------------------------------------------------------------------------
// nccl_bw

TEST_CASE("nccl_bw checks: bus bandwidth at the largest size, #wrong, a run that failed") {
  const Module& nb = M("nccl_bw");
  auto run = [&](const char* fixture, int status) { return FactsOf("nccl_bw", {{"allreduce", fixture, status}}); };
  const Facts good = run("@nccl_bw/allreduce-8xh100-g8.txt", 0);

  const json ok = Desired("nccl_bw", {{"min_busbw_gbps", 200}});
  auto checks = nb.Checks(ok, good);
  CHECK(Failing(checks).empty());
  CHECK(With(checks, CheckStatus::kPass) == std::set<std::string>{"nccl_bw.run", "nccl_bw.busbw", "nccl_bw.wrong"});
  CHECK(Find(checks, "nccl_bw.busbw").message == "busbw 220.61 GB/s >= 200 at 8589934592 bytes");
  CHECK(nb.Diff(ok, good).empty());

  const json fast = Desired("nccl_bw", {{"min_busbw_gbps", 350}});
  auto low = nb.Checks(fast, good);
  CHECK(Failing(low) == std::set<std::string>{"nccl_bw.busbw"});
  CHECK(Find(low, "nccl_bw.busbw").measured == 220.61);
  CHECK(Find(low, "nccl_bw.busbw").threshold == json{{"min", 350}});
  CheckFindingsNotActions(nb, fast, good);

  // Wrong values: all_reduce_perf exits 1 for them; the #wrong check is the one finding.
  const Facts wrong = run("@nccl_bw/allreduce-wrong-values.txt", 1);
  auto w = nb.Checks(ok, wrong);
  CHECK(Failing(w) == std::set<std::string>{"nccl_bw.wrong"});
  CHECK(Find(w, "nccl_bw.wrong").message == "22 wrong values > 0 (50 values out of bounds)");
  CHECK(Failing(nb.Checks(Desired("nccl_bw", {{"min_busbw_gbps", 200}, {"max_wrong", 22}}), wrong)).empty());
  CheckFindingsNotActions(nb, ok, wrong);

  struct Row {
    const char* fixture;
    int status;
    std::set<std::string> failing;
    const char* id;
    const char* message;
  };
  for (const Row& r : std::vector<Row>{
           {"@nccl_bw/allreduce-died-midway.txt", 1, {"nccl_bw.run"}, "nccl_bw.run", "(and 1 more)"},
           {"@nccl_bw/allreduce-nccl-warn.txt", 1, {"nccl_bw.run", "nccl_bw.busbw"}, "nccl_bw.run", "NCCL WARN Net"},
           {"@nccl_bw/allreduce-8xh100-g8.txt", 124, {"nccl_bw.allreduce.unread", "nccl_bw.run"}, "nccl_bw.allreduce.unread",
            "killed (exit 124)"},
           {"@nvidia_driver/smi-garbage.txt", 0, {"nccl_bw.allreduce.unread"}, "nccl_bw.allreduce.unread", "not read"},
           {"plumb-absent: all_reduce_perf\n", 127, {"nccl_bw.installed"}, "nccl_bw.installed", "nccl-tests"},
       }) {
    CAPTURE(r.fixture);
    Facts f = run(r.fixture, r.status);
    auto got = nb.Checks(Desired("nccl_bw", {{"min_busbw_gbps", 100}}), f);
    CHECK(Failing(got) == r.failing);
    CHECK_MESSAGE(Find(got, r.id).message.find(r.message) != std::string::npos, Find(got, r.id).message);
    CheckFindingsNotActions(nb, Desired("nccl_bw", {{"min_busbw_gbps", 100}}), f);
  }
}

TEST_CASE("nccl_bw check script: sizes, GPUs and timeout from desired, quoted") {
  const Module& nb = M("nccl_bw");
  auto script = [&](json settings, json gpu_health = nullptr) {
    json d = Desired("nccl_bw", std::move(settings));
    if (!gpu_health.is_null()) d["health"]["gpu_health"] = gpu_health;
    return nb.CheckScript(d);
  };
  std::string s = script({{"min_busbw_gbps", 350}});
  CHECK(s.find("plumb_run_for '600' allreduce all_reduce_perf -b 8 -e '8G' -f 2 -g \"$plumb_nb_g\"") != std::string::npos);
  CHECK(s.find("nvidia-smi -L") != std::string::npos);
  CHECK(s.find("NCCL_DEBUG=WARN; export NCCL_DEBUG") != std::string::npos);
  s = script({{"min_busbw_gbps", 350}, {"max_bytes", "512M"}, {"timeout_s", 900}}, {{"expected_gpus", 4}});
  CHECK(s.find("plumb_nb_g='4'\n") != std::string::npos);
  CHECK(s.find("nvidia-smi") == std::string::npos);
  CHECK(s.find("plumb_run_for '900' allreduce all_reduce_perf -b 8 -e '512M' -f 2") != std::string::npos);
  CHECK(script({{"max_bytes", 1073741824}}).find("-e '1073741824'") != std::string::npos);
  for (json bad : {json("8G; reboot"), json("08G"), json("8T"), json(""), json(-5), json(4.5)}) {
    CAPTURE(bad.dump());
    std::string t = script({{"max_bytes", bad}, {"timeout_s", "1; reboot"}});
    CHECK(t.find("-e '8G'") != std::string::npos);
    CHECK(t.find("plumb_run_for '600'") != std::string::npos);
    CHECK(t.find("reboot") == std::string::npos);
  }
  CHECK(nccl_bw::MaxBytes(Desired("nccl_bw", {{"max_bytes", "2G"}})) == "2G");
}

// ---------------------------------------------------------------------------------------------
// ib_health

TEST_CASE("ib_health checks: error counters per port against max_counters") {
  const Module& ib = M("ib_health");
  const json defaults = Desired("ib_health", {{"max_counters", json::object()}});
  const Facts f = FactsOf("ib_health", {{"perfquery.mlx5_0.1", "@ib_health/perfquery-ndr-clean.txt"},
                                        {"perfquery.mlx5_3.1", "@ib_health/perfquery-ndr-errors.txt"}});
  auto checks = ib.Checks(defaults, f);
  CHECK(Failing(checks) == std::set<std::string>{"ib_health.mlx5_3.1.SymbolErrorCounter",
                                                 "ib_health.mlx5_3.1.LinkDownedCounter",
                                                 "ib_health.mlx5_3.1.PortRcvErrors"});
  CHECK(Find(checks, "ib_health.mlx5_0.1").status == CheckStatus::kPass);
  const CheckResult& sym = Find(checks, "ib_health.mlx5_3.1.SymbolErrorCounter");
  CHECK(sym.subject == "mlx5_3 port 1");
  CHECK(sym.measured == 15);
  CHECK(sym.threshold == json{{"max", 0}});
  CHECK(sym.message.find("SymbolErrorCounter 15 > 0") == 0);
  CHECK(sym.message.find("perfquery -R -C mlx5_3 -P 1") != std::string::npos);
  CheckFindingsNotActions(ib, defaults, f);

  // Raised limits pass; one raised too little still fails; VL15Dropped is not held by default.
  const json raised = Desired("ib_health", {{"max_counters", {{"SymbolErrorCounter", 20}, {"LinkDownedCounter", 1},
                                                              {"PortRcvErrors", 2}}}});
  CHECK(Failing(ib.Checks(raised, f)) == std::set<std::string>{"ib_health.mlx5_3.1.PortRcvErrors"});
  Facts vl15 = f;
  vl15["ports"][0]["counters"]["VL15Dropped"] = 7;
  CHECK(Failing(ib.Checks(raised, vl15)) == std::set<std::string>{"ib_health.mlx5_3.1.PortRcvErrors"});
  CHECK(Failing(ib.Checks(Desired("ib_health", {{"max_counters", {{"VL15Dropped", 0}}}}), vl15)).count(
      "ib_health.mlx5_0.1.VL15Dropped"));
  // A counter perfquery does not print cannot pass.
  auto named = ib.Checks(Desired("ib_health", {{"max_counters", {{"PortLocalPhysicalErrors", 0}}}}), f);
  CHECK(Find(named, "ib_health.mlx5_0.1.PortLocalPhysicalErrors").status == CheckStatus::kSkip);
}

TEST_CASE("ib_health checks: a port perfquery could not read, no port at all") {
  const Module& ib = M("ib_health");
  const json d = Desired("ib_health", {{"max_counters", json::object()}});
  Facts one_bad = FactsOf("ib_health", {{"perfquery.mlx5_0.1", "@ib_health/perfquery-ndr-clean.txt"},
                                        {"perfquery.mlx5_5.1", "@ib_health/perfquery-iberror.txt", 255}});
  auto checks = ib.Checks(d, one_bad);
  CHECK(Failing(checks) == std::set<std::string>{"ib_health.perfquery.mlx5_5.1.unread"});
  CHECK(Find(checks, "ib_health.perfquery.mlx5_5.1.unread").subject == "mlx5_5 port 1");
  CheckFindingsNotActions(ib, d, one_bad);

  for (const std::vector<PartSpec>& parts : {std::vector<PartSpec>{}, std::vector<PartSpec>{{"perfquery.mlx5_0.1", "plumb-absent: perfquery\n", 127}}}) {
    Facts none = FactsOf("ib_health", parts);
    auto got = ib.Checks(d, none);
    CHECK(Failing(got) == std::set<std::string>{"ib_health.ports"});
  }
}

// ---------------------------------------------------------------------------------------------
// The snippets under a real shell, against fake tools that record how they were called

namespace {

struct FakeBin {
  std::filesystem::path dir;
  FakeBin() {
    dir = std::filesystem::temp_directory_path() / ("plumb-health-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~FakeBin() { std::filesystem::remove_all(dir); }
  // A tool that appends its arguments to <dir>/calls and runs `body`.
  void Tool(const std::string& name, const std::string& body) {
    auto p = dir / name;
    std::ofstream(p) << "#!/bin/sh\necho \"" << name << " $*\" >>'" << (dir / "calls").string() << "'\n" << body << "\n";
    std::filesystem::permissions(p, std::filesystem::perms::owner_all);
  }
  std::string Calls() const {
    std::ifstream in(dir / "calls");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string Fixture(const std::string& relative) const {
    return std::string("cat '") + PLUMB_TEST_DATA + "/" + relative + "'";
  }
};

// Presents a snippet as a module's probe, so BuildProbeScript wraps it as gather (and a health
// run) does: the preamble, a subshell, the section markers.
class SnippetModule final : public Module {
 public:
  SnippetModule(const Module& of, std::string snippet) : of_(of), snippet_(std::move(snippet)) {}
  const ModuleInfo& Info() const override { return of_.Info(); }
  std::string ProbeScript() const override { return snippet_; }
  std::vector<Action> Diff(const nlohmann::json&, const Facts&) const override { return {}; }

 private:
  const Module& of_;
  std::string snippet_;
};

// Runs `snippet` as `module`'s section with the fakes first on PATH (the preamble's PATH line,
// which puts the system's directories first, is left out so the fakes win) -> its facts.
Facts RunSnippet(const FakeBin& bin, const Module& module, const std::string& snippet) {
  const std::string nonce = NewProbeNonce();
  SnippetModule m(module, snippet);
  auto script = BuildProbeScript({&m}, nonce);
  REQUIRE(script.ok());
  std::string text = *script;
  const std::string path_line = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH; export PATH";
  REQUIRE(text.find(path_line) != std::string::npos);
  text.replace(text.find(path_line), path_line.size(), "");
  auto file = bin.dir / "script.sh";
  std::ofstream(file) << text;
  std::string out;
  const std::string cmd = "PATH='" + bin.dir.string() + "':\"$PATH\" sh '" + file.string() + "' 2>/dev/null";
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
  }
  auto split = SplitProbeOutput(out, nonce, {std::string(module.Name())});
  REQUIRE_MESSAGE(split.problems.empty(), split.problems.ToText() << out);
  const ProbeSection& s = split.sections.at(std::string(module.Name()));
  auto facts = module.ParseProbe(s.out, s.exit_status);
  REQUIRE_MESSAGE(facts.ok(), facts.error().message);
  FactsSchema schema(std::string(module.Name()));
  CHECK_MESSAGE(schema.Errors(*facts).empty(), schema.Errors(*facts));
  return *facts;
}

}  // namespace

TEST_CASE("dcgm check script under sh: the parts the parser reads, the level asked, the timeout kept") {
  const Module& dcgm = M("dcgm");
  FakeBin bin;
  bin.Tool("dcgmi", "case $1 in\n"
                    "  discovery) " + bin.Fixture("dcgm/discovery-8xh800-dcgm318.txt") + " ;;\n"
                    "  diag) " + bin.Fixture("dcgm/diag-r3-dcgm3-memory-fail-gpu3.json") + "; exit 226 ;;\n"
                    "esac");
  const json d = {{"health", {{"dcgm", {{"level", 3}}}, {"gpu_health", {{"expected_gpus", 8}}}}}};
  Facts f = RunSnippet(bin, dcgm, dcgm.CheckScript(d));
  CHECK(bin.Calls() == "dcgmi discovery -l\ndcgmi diag -r 3 -j\n");
  CHECK(f["gpus"].size() == 8);
  CHECK(Failing(dcgm.Checks(d, f)) == std::set<std::string>{"dcgm.gpu_memory.gpu3"});

  // A diagnostic past its timeout is killed, and the check says so.
  bin.Tool("dcgmi", "case $1 in\n  discovery) " + bin.Fixture("dcgm/discovery-8xh800-dcgm318.txt") +
                        " ;;\n  diag) exec sleep 5 ;;\nesac");
  const json quick = {{"health", {{"dcgm", {{"level", 1}, {"timeout_s", 1}}}}}};
  Facts killed = RunSnippet(bin, dcgm, dcgm.CheckScript(quick));
  auto checks = dcgm.Checks(quick, killed);
  CHECK(Failing(checks) == std::set<std::string>{"dcgm.diag.unread"});
  CHECK(Find(checks, "dcgm.diag.unread").message.find("killed (exit 124)") != std::string::npos);
}

TEST_CASE("nccl_bw check script under sh: every GPU, the sizes asked, NCCL's warnings on") {
  const Module& nb = M("nccl_bw");
  FakeBin bin;
  bin.Tool("nvidia-smi", "i=0; while [ $i -lt 8 ]; do echo \"GPU $i: NVIDIA H100 80GB HBM3 (UUID: GPU-$i)\"; i=$((i+1)); done");
  bin.Tool("all_reduce_perf", "echo \"NCCL_DEBUG=$NCCL_DEBUG\" >>'" + (bin.dir / "calls").string() + "'\n" +
                                  bin.Fixture("nccl_bw/allreduce-8xh100-g8.txt"));
  const json d = Desired("nccl_bw", {{"min_busbw_gbps", 350}, {"max_bytes", "8G"}});
  Facts f = RunSnippet(bin, nb, nb.CheckScript(d));
  CHECK(bin.Calls() == "nvidia-smi -L\nall_reduce_perf -b 8 -e 8G -f 2 -g 8\nNCCL_DEBUG=WARN\n");
  CHECK(f["busbw_at_largest"] == 220.61);
  CHECK(Failing(nb.Checks(d, f)) == std::set<std::string>{"nccl_bw.busbw"});
}

TEST_CASE("gpu_health probe under sh: the health query, XID lines only, journalctl when dmesg is refused") {
  const Module& gh = M("gpu_health");
  FakeBin bin;
  bin.Tool("nvidia-smi", bin.Fixture("gpu_health/smi-health-8xh100-failing.txt"));
  bin.Tool("dmesg", "echo 'dmesg: read kernel buffer failed: Operation not permitted' >&2; exit 1");
  bin.Tool("journalctl", bin.Fixture("gpu_health/dmesg-xid79-h100.txt"));
  Facts f = RunSnippet(bin, gh, gh.ProbeScript());
  CHECK(bin.Calls() == "nvidia-smi --query-gpu=" + std::string(gpu_health::kHealthQueryFields) +
                           " --format=csv,noheader\ndmesg \njournalctl -k -b --no-pager\n");
  CHECK_FALSE(f.contains("part_errors"));
  REQUIRE(f["xids"].size() == 1);
  CHECK(f["xids"][0]["gpu"] == 3);
  CHECK(f["xids"][0]["line"] == 1);   // only the XID line travelled
  CHECK(f["gpu_count"] == 8);

  // dmesg allowed: journalctl is not asked; neither tool: the part is absent.
  bin.Tool("dmesg", bin.Fixture("gpu_health/dmesg-ctime-xid13-109.txt"));
  std::filesystem::remove(bin.dir / "calls");
  Facts g = RunSnippet(bin, gh, gh.ProbeScript());
  CHECK(bin.Calls().find("journalctl") == std::string::npos);
  CHECK(g["xid_counts"] == json{{"13", 3}, {"109", 1}});
}

TEST_CASE("ib_health probe under sh: perfquery for each Active InfiniBand port, without traffic counters") {
  const Module& ib = M("ib_health");
  FakeBin bin;
  bin.Tool("ibstat", bin.Fixture("infiniband/ibstat-mixed-down-eth.txt"));
  bin.Tool("perfquery", "case $2 in mlx5_3) " + bin.Fixture("ib_health/perfquery-ndr-errors.txt") + " ;;\n"
                        "*) " + bin.Fixture("ib_health/perfquery-ndr-clean.txt") + " ;; esac");
  Facts f = RunSnippet(bin, ib, ib.ProbeScript());
  // mlx5_1 is Down, mlx5_2 is Ethernet (RoCE): not queried.
  CHECK(bin.Calls() == "ibstat \nperfquery -C mlx5_0 -P 1\nperfquery -C mlx5_3 -P 1\n");
  REQUIRE(f["ports"].size() == 2);
  CHECK(f["ports"][1]["ca"] == "mlx5_3");
  CHECK(f["ports"][1]["counters"]["SymbolErrorCounter"] == 15);
  for (const char* traffic : {"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortXmitWait"})
    CHECK_FALSE(f["ports"][1]["counters"].contains(traffic));
  CHECK(f["ports"][1]["counters"].contains("VL15Dropped"));
  const json d = Desired("ib_health", {{"max_counters", json::object()}});
  CHECK(Failing(ib.Checks(d, f)).size() == 3);

  // No ibstat: no port, and the check says nothing was read.
  std::filesystem::remove(bin.dir / "ibstat");
  Facts none = RunSnippet(bin, ib, ib.ProbeScript());
  CHECK(none["ports"].empty());
}

TEST_CASE("ib_health probe: the traffic filter (sh builtins) drops exactly the traffic counters") {
  const Module& ib = M("ib_health");
  FakeBin bin;
  bin.Tool("ibstat", bin.Fixture("infiniband/ibstat-mixed-down-eth.txt"));
  // The extended counters' names (perfquery -x) too: PortUnicast*/PortMulticast* are traffic.
  bin.Tool("perfquery",
           "printf '%s\\n' '# Port extended counters: Lid 13 port 1 (CapMask: 0x5A00)' "
           "'PortSelect:......................1' 'SymbolErrorCounter:..............15' "
           "'PortUnicastXmitPkts:.............42' 'PortMulticastRcvPkts:............7' "
           "'PortXmitData:....................9' 'PortXmitWait:....................3' "
           "'VL15Dropped:.....................2'");
  Facts f = RunSnippet(bin, ib, ib.ProbeScript());
  REQUIRE(f["ports"].size() == 2);
  const json& c = f["ports"][0]["counters"];
  CHECK(c["SymbolErrorCounter"] == 15);
  CHECK(c["VL15Dropped"] == 2);
  for (const char* traffic : {"PortUnicastXmitPkts", "PortMulticastRcvPkts", "PortXmitData", "PortXmitWait"})
    CHECK_FALSE(c.contains(traffic));
}
