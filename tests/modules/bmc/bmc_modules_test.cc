#include <doctest/doctest.h>

#include "fakes/fake_redfish.h"
#include "fakes/forward_http.h"
#include "modules/bios/bios.h"
#include "modules/firmware/firmware.h"
#include "modules/power/power.h"
#include "modules/transport/redfish_client.h"

namespace plumb::modules {
namespace {

using firmware::FirmwareModule;
using firmware::ApplyFirmware;
using bios::BiosModule;
using bios::ApplyBios;
using bios::CheckAgainstRegistry;
using power::PowerModule;

using nlohmann::json;
using testing::FakeRedfish;
using testing::RecordedRequest;
using transport::HttpResponse;

struct Bench {
  FakeRedfish fake;
  std::unique_ptr<transport::RedfishClient> bmc;
  Bench() {
    fake.AddSystem({"On", "ForceOff", "GracefulRestart", "ForceRestart"});
    auto& r = fake.resources;
    r["/redfish/v1/UpdateService"] = {
        {"@odata.id", "/redfish/v1/UpdateService"},
        {"FirmwareInventory", {{"@odata.id", "/redfish/v1/UpdateService/FirmwareInventory"}}},
        {"MultipartHttpPushUri", "/redfish/v1/UpdateService/upload"},
        {"Actions", {{"#UpdateService.SimpleUpdate",
                      {{"target", "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"},
                       {"TransferProtocol@Redfish.AllowableValues", {"HTTP", "HTTPS"}}}}}}};
    r["/redfish/v1/UpdateService/FirmwareInventory"] = {
        {"Members", {{{"@odata.id", "/redfish/v1/UpdateService/FirmwareInventory/1"}},
                     {{"@odata.id", "/redfish/v1/UpdateService/FirmwareInventory/2"}}}},
        {"Members@odata.nextLink", "/redfish/v1/UpdateService/FirmwareInventory?page=2"}};
    r["/redfish/v1/UpdateService/FirmwareInventory?page=2"] = {
        {"Members", {{{"@odata.id", "/redfish/v1/UpdateService/FirmwareInventory/3"}}}}};
    auto fw = [&](int id, const char* name, const char* swid, const char* ver, bool upd) {
      std::string l = "/redfish/v1/UpdateService/FirmwareInventory/" + std::to_string(id);
      json m = {{"@odata.id", l}, {"Id", std::to_string(id)}, {"Name", name}, {"Version", ver},
                {"Updateable", upd}};
      if (*swid) m["SoftwareId"] = swid;
      r[l] = m;
    };
    fw(1, "BIOS", "", "1.8.0 ", true);
    fw(2, "iDRAC", "BMC", "24.01.01", true);
    fw(3, "NVIDIA A100", "", "92.00", false);
    r["/redfish/v1/Systems/1"]["Bios"] = {{"@odata.id", "/redfish/v1/Systems/1/Bios"}};
    r["/redfish/v1/Systems/1/Bios"] = {
        {"@odata.id", "/redfish/v1/Systems/1/Bios"},
        {"AttributeRegistry", "BiosAttributeRegistryT.v1_0_0"},
        {"Attributes", {{"SriovGlobalEnable", "Disabled"}, {"WorkloadProfile", "HPC"}, {"NumaNodes", 4}}},
        {"@Redfish.Settings", {{"SettingsObject", {{"@odata.id", "/redfish/v1/Systems/1/Bios/Settings"}}},
                               {"SupportedApplyTimes", {"OnReset", "Immediate"}}}}};
    r["/redfish/v1/Systems/1/Bios/Settings"] = {
        {"Attributes", {{"SriovGlobalEnable", "Disabled"}, {"WorkloadProfile", "HPC"}, {"NumaNodes", 4}}}};
    r["/redfish/v1/"]["Registries"] = {{"@odata.id", "/redfish/v1/Registries"}};
    r["/redfish/v1/Registries"] = {{"Members", {{{"@odata.id", "/redfish/v1/Registries/BiosT"}},
                                                {{"@odata.id", "/redfish/v1/Registries/BiosTX"}}}}};
    r["/redfish/v1/Registries/BiosTX"] = {{"Id", "BiosTX"}, {"Registry", "BiosAttributeRegistryT.v1_0_0X"}};
    r["/redfish/v1/Registries/BiosT"] = {
        {"Id", "BiosT"}, {"Registry", "BiosAttributeRegistryT.v1_0_0"},
        {"Location", {{{"Language", "en"}, {"Uri", "/redfish/v1/registrystore/biost/"}}}}};
    r["/redfish/v1/registrystore/biost/"] = {
        {"RegistryEntries", {{"Attributes", {
            {{"AttributeName", "SriovGlobalEnable"}, {"Type", "Enumeration"},
             {"Value", {{{"ValueName", "Enabled"}}, {{"ValueName", "Disabled"}}}}},
            {{"AttributeName", "WorkloadProfile"}, {"Type", "Enumeration"},
             {"Value", {{{"ValueName", "HPC"}}, {{"ValueName", "Balanced"}}}}},
            {{"AttributeName", "NumaNodes"}, {"Type", "Integer"}, {"LowerBound", 1}, {"UpperBound", 8}},
            {{"AttributeName", "SerialNumber"}, {"Type", "String"}, {"ReadOnly", true}}}}}}};
    transport::RedfishOptions o;
    o.base_url = "https://bmc.example";
    o.credentials = {"admin", transport::Secret("s3cret-PLANTED")};
    o.sleep = [](std::chrono::milliseconds) {};
    o.task_poll = std::chrono::milliseconds(10);
    bmc = std::make_unique<transport::RedfishClient>(std::make_unique<testing::ForwardHttp>(&fake), o);
  }
};

}  // namespace

TEST_CASE("firmware: facts walk every page of FirmwareInventory") {
  Bench b;
  auto f = FirmwareModule().ProbeBmc(*b.bmc);
  REQUIRE(f.ok());
  const auto& c = f.value()["components"];
  REQUIRE(c.size() == 3);
  CHECK(c[0]["version"] == "1.8.0");   // trimmed
  CHECK(c[1]["software_id"] == "BMC");
  CHECK(c[2]["updateable"] == false);
  CHECK(f.value()["update_service"]["multipart_push"] == "/redfish/v1/UpdateService/upload");
}

TEST_CASE("firmware: diff matches Name or SoftwareId and orders BMC before BIOS before others") {
  Bench b;
  Facts facts = FirmwareModule().ProbeBmc(*b.bmc).value();
  json desired = {{"firmware", {{"NVIDIA A100", "93.00"}, {"BIOS", "1.9.0"}, {"BMC", "24.09.17"}}},
                  {"firmware_images", {{"BMC", "https://fw.example/BMC-24.09.17.bin"}}}};
  auto acts = FirmwareModule().Diff(desired, facts);
  REQUIRE(acts.size() == 3);
  CHECK(acts[0].id == "firmware.BMC");
  CHECK(acts[0].before == "24.01.01");
  CHECK(acts[0].disruption == Disruption::kFirmwareFlash);
  CHECK(acts[0].params["targets"][0] == "/redfish/v1/UpdateService/FirmwareInventory/2");
  CHECK(acts[1].id == "firmware.BIOS");
  CHECK(acts[2].summary.find("not updateable") != std::string::npos);
  CHECK(FirmwareModule().Diff({{"firmware", {{"BIOS", "1.8.0"}}}}, facts).empty());
  auto missing = FirmwareModule().Diff({{"firmware", {{"CPLD", "2"}}}}, facts);
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].before.is_null());
  // Images without any version pin: nothing to change (a stack that only says where images
  // live), never an exception (integration finding: `bmc plan` threw on it).
  CHECK(FirmwareModule().Diff({{"firmware_images", {{"BMC", "https://fw.example/b.bin"}}}}, facts).empty());
}

TEST_CASE("firmware: SimpleUpdate without If-Match, task followed, version verified") {
  Bench b;
  auto& f = b.fake;
  bool staged_only = false;
  f.handlers["/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"] =
      [&](const RecordedRequest& r) -> Result<HttpResponse> {
    CHECK(r.Header("if-match").empty());
    json body = json::parse(r.body);
    CHECK(body["ImageURI"] == "https://fw.example/BMC-24.09.17.bin");
    CHECK(body["TransferProtocol"] == "HTTPS");
    CHECK(body["Targets"][0] == "/redfish/v1/UpdateService/FirmwareInventory/2");
    if (!staged_only) f.resources["/redfish/v1/UpdateService/FirmwareInventory/2"]["Version"] = "24.09.17";
    return FakeRedfish::Reply(202, json(), {{"location", "/redfish/v1/TaskService/TaskMonitors/1"}});
  };
  f.handlers["/redfish/v1/TaskService/TaskMonitors/1"] = [](const RecordedRequest&) -> Result<HttpResponse> {
    return FakeRedfish::Reply(200, {{"@odata.id", "/redfish/v1/TaskService/Tasks/1"}, {"TaskState", "Completed"}});
  };
  json desired = {{"firmware", {{"BMC", "24.09.17"}}},
                  {"firmware_images", {{"BMC", "https://fw.example/BMC-24.09.17.bin"}}}};
  auto acts = FirmwareModule().Diff(desired, FirmwareModule().ProbeBmc(*b.bmc).value());
  REQUIRE(acts.size() == 1);
  SUBCASE("updated") {
    auto r = ApplyFirmware(*b.bmc, acts[0]);
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().staged);
    CHECK(FirmwareModule().Diff(desired, FirmwareModule().ProbeBmc(*b.bmc).value()).empty());
  }
  SUBCASE("staged: the task completes but the version changes only on reset") {
    staged_only = true;
    auto r = ApplyFirmware(*b.bmc, acts[0]);
    REQUIRE(r.ok());
    CHECK(r.value().staged);
    CHECK(r.value().Describe().find("applies on reset") != std::string::npos);
  }
}

TEST_CASE("firmware: a file image is pushed multipart - a failed task is an error") {
  Bench b;
  auto& f = b.fake;
  f.handlers["/redfish/v1/UpdateService/upload"] = [&](const RecordedRequest& r) -> Result<HttpResponse> {
    CHECK(r.body.find("[part UpdateParameters]") != std::string::npos);
    CHECK(r.body.find("[part UpdateFile]") != std::string::npos);
    json t = {{"@odata.id", "/redfish/v1/TaskService/Tasks/2"}, {"TaskState", "Exception"},
              {"Messages", {{{"MessageId", "Update.1.0.VerificationFailed"}, {"Message", "bad signature"}}}}};
    return FakeRedfish::Reply(202, t, {{"location", "/redfish/v1/TaskService/TaskMonitors/2"}});
  };
  f.handlers["/redfish/v1/TaskService/TaskMonitors/2"] = [](const RecordedRequest&) -> Result<HttpResponse> {
    return FakeRedfish::Reply(200, {{"@odata.id", "/redfish/v1/TaskService/Tasks/2"}, {"TaskState", "Exception"},
        {"Messages", {{{"MessageId", "Update.1.0.VerificationFailed"}, {"Message", "bad signature"}}}}});
  };
  json desired = {{"firmware", {{"BIOS", "1.9.0"}}}, {"firmware_images", {{"BIOS", "file:/nonexistent/BIOS-1.9.0.bin"}}}};
  auto acts = FirmwareModule().Diff(desired, FirmwareModule().ProbeBmc(*b.bmc).value());
  REQUIRE(acts.size() == 1);
  auto r = ApplyFirmware(*b.bmc, acts[0]);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("bad signature") != std::string::npos);
}

TEST_CASE("firmware: no image configured is a clear error naming the setting") {
  Bench b;
  auto acts = FirmwareModule().Diff({{"firmware", {{"BMC", "9"}}}}, FirmwareModule().ProbeBmc(*b.bmc).value());
  REQUIRE(acts.size() == 1);
  auto r = ApplyFirmware(*b.bmc, acts[0]);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().key_path == "firmware_images.BMC");
}

TEST_CASE("bios: facts are current + pending - diff is typed - apply stages with OnReset") {
  Bench b;
  auto& f = b.fake;
  f.resources["/redfish/v1/Systems/1/Bios/Settings"]["Attributes"]["WorkloadProfile"] = "Balanced";
  Facts facts = BiosModule().ProbeBmc(*b.bmc).value();
  CHECK(facts["attributes"]["NumaNodes"] == 4);
  CHECK(facts["pending"] == json{{"WorkloadProfile", "Balanced"}});
  CHECK(facts["settings"] == "/redfish/v1/Systems/1/Bios/Settings");

  CHECK(BiosModule().Diff({{"bios", {{"NumaNodes", "4"}}}}, facts).empty());   // "4" == 4
  json desired = {{"bios", {{"SriovGlobalEnable", "Enabled"}, {"WorkloadProfile", "HPC"}}}};
  auto acts = BiosModule().Diff(desired, facts);
  REQUIRE(acts.size() == 1);
  CHECK(acts[0].after == json{{"SriovGlobalEnable", "Enabled"}});
  CHECK(acts[0].disruption == Disruption::kReboot);

  auto r = ApplyBios(*b.bmc, acts[0]);
  REQUIRE(r.ok());
  CHECK(r.value().find("staged 1") != std::string::npos);
  const auto& patch = f.log[f.log.size() - 1];
  CHECK(patch.method == "PATCH");
  CHECK(patch.path == "/redfish/v1/Systems/1/Bios/Settings");
  CHECK(!patch.Header("if-match").empty());
  json body = json::parse(patch.body);
  CHECK(body["@Redfish.SettingsApplyTime"]["ApplyTime"] == "OnReset");
  CHECK(body["Attributes"] == json{{"SriovGlobalEnable", "Enabled"}});

  SUBCASE("an identical pending change is not staged again") {
    Facts again = BiosModule().ProbeBmc(*b.bmc).value();
    auto acts2 = BiosModule().Diff({{"bios", {{"SriovGlobalEnable", "Enabled"}}}}, again);
    REQUIRE(acts2.size() == 1);
    CHECK(acts2[0].summary.find("already pending") != std::string::npos);
    int patches = f.Count("PATCH", "/redfish/v1/Systems/1/Bios/Settings");
    auto r2 = ApplyBios(*b.bmc, acts2[0]);
    REQUIRE(r2.ok());
    CHECK(r2.value() == "already pending, applies on reset");
    CHECK(f.Count("PATCH", "/redfish/v1/Systems/1/Bios/Settings") == patches);
  }
}

TEST_CASE("bios: registry violations are errors before any PATCH") {
  Bench b;
  Facts facts = BiosModule().ProbeBmc(*b.bmc).value();
  auto acts = BiosModule().Diff({{"bios", {{"SriovGlobalEnable", "Maybe"}, {"NumaNodes", 99}, {"Bogus", 1}}}}, facts);
  REQUIRE(acts.size() == 1);
  auto r = ApplyBios(*b.bmc, acts[0]);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "apply.bios.registry");
  CHECK(r.error().message.find("'Maybe' is not one of [Enabled, Disabled]") != std::string::npos);
  CHECK(r.error().message.find("NumaNodes: above 8") != std::string::npos);
  CHECK(r.error().message.find("Bogus: not an attribute") != std::string::npos);
  CHECK(b.fake.Count("PATCH", "/redfish/v1/Systems/1/Bios/Settings") == 0);
  CHECK(CheckAgainstRegistry({{"SerialNumber", "x"}}, b.fake.resources["/redfish/v1/registrystore/biost/"]["RegistryEntries"]["Attributes"])
            == std::vector<std::string>{"SerialNumber: read-only"});
}

TEST_CASE("bios: without a registry, the BMC's 400 ExtendedInfo is the error") {
  Bench b;
  b.fake.resources["/redfish/v1/Systems/1/Bios"].erase("AttributeRegistry");
  b.fake.script["PATCH /redfish/v1/Systems/1/Bios/Settings"].push_back(
      FakeRedfish::Error(400, "Base.1.18.PropertyValueNotInList", "The value Maybe for SriovGlobalEnable is not in the list"));
  Facts facts = BiosModule().ProbeBmc(*b.bmc).value();
  auto acts = BiosModule().Diff({{"bios", {{"SriovGlobalEnable", "Maybe"}}}}, facts);
  auto r = ApplyBios(*b.bmc, acts.at(0));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "bmc.http.400");
  CHECK(r.error().message.find("PropertyValueNotInList") != std::string::npos);
}

TEST_CASE("bios: no @Redfish.Settings (AMI): Bios/SD found by probing") {
  Bench b;
  auto& r = b.fake.resources;
  r["/redfish/v1/Systems/1/Bios"].erase("@Redfish.Settings");
  r["/redfish/v1/Systems/1/Bios/SD"] = r["/redfish/v1/Systems/1/Bios/Settings"];
  r.erase("/redfish/v1/Systems/1/Bios/Settings");
  Facts facts = BiosModule().ProbeBmc(*b.bmc).value();
  CHECK(facts["settings"] == "/redfish/v1/Systems/1/Bios/SD");
}

TEST_CASE("power: facts from the System - desired power drives a reset") {
  Bench b;
  auto f = PowerModule().ProbeBmc(*b.bmc);
  REQUIRE(f.ok());
  CHECK(f.value()["power_state"] == "On");
  CHECK(f.value()["health"] == "OK");
  CHECK(f.value()["serial_number"] == "SN123");
  CHECK(PowerModule().Diff(json::object(), f.value()).empty());
  auto acts = PowerModule().Diff({{"power", "Off"}}, f.value());
  REQUIRE(acts.size() == 1);
  NodeContext ctx;
  ctx.bmc = b.bmc.get();
  REQUIRE(PowerModule().Apply(ctx, acts[0]).ok());
  CHECK(b.fake.resources["/redfish/v1/Systems/1"]["PowerState"] == "Off");
  NodeContext none;
  CHECK(PowerModule().Apply(none, acts[0]).error().code == "apply.no-bmc");
}

}  // namespace plumb::modules

// ---- facts schemas (schemas/facts/{firmware,bios,power}.schema.json) ----
#include <fstream>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

namespace plumb::modules {
namespace {

bool ValidFacts(const std::string& module, const nlohmann::json& facts) {
  std::ifstream in(std::string(PLUMB_SOURCE_DIR) + "/schemas/facts/" + module + ".schema.json");
  REQUIRE(in.good());
  nlohmann::json doc = nlohmann::json::parse(in);
  valijson::Schema schema;
  valijson::SchemaParser parser;
  valijson::adapters::NlohmannJsonAdapter sa(doc);
  parser.populateSchema(sa, schema);
  valijson::Validator v;
  valijson::adapters::NlohmannJsonAdapter ta(facts);
  return v.validate(schema, ta, nullptr);
}

}  // namespace

TEST_CASE("bmc facts validate against their schemas - a wrong shape does not") {
  Bench b;
  for (const auto& m : std::vector<const Module*>{new FirmwareModule, new BiosModule, new PowerModule}) {
    std::unique_ptr<const Module> owned(m);
    auto f = m->ProbeBmc(*b.bmc);
    REQUIRE(f.ok());
    CHECK_MESSAGE(ValidFacts(std::string(m->Name()), f.value()), f.value().dump());
    nlohmann::json broken = f.value();
    broken["unexpected"] = 1;
    CHECK_FALSE(ValidFacts(std::string(m->Name()), broken));
  }
}

}  // namespace plumb::modules
