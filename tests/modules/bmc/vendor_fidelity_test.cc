// The Redfish shapes of vendor BMCs that plumb met in the field (issue 12), each as a small
// fixture on the fake Redfish service, shaped like the public mockups in
// ../shared/redfish-mockups (EX235n: HPE Cray EX blade; Gigabyte: AMI MegaRAC) but written here
// (no third-party data in the project). Each test failed before its fix.
#include <doctest/doctest.h>

#include "fakes/fake_redfish.h"
#include "fakes/forward_http.h"
#include "modules/bios/attributes.h"
#include "modules/bios/bios.h"
#include "modules/firmware/firmware.h"
#include "modules/firmware/scope.h"
#include "modules/firmware/simple_update.h"
#include "modules/power/power.h"
#include "modules/transport/redfish_client.h"

namespace plumb::modules {
namespace {

using bios::ApplyBios;
using bios::BiosModule;
using firmware::ApplyFirmware;
using firmware::FirmwareModule;
using nlohmann::json;
using power::PowerModule;
using testing::FakeRedfish;
using testing::RecordedRequest;
using transport::HttpResponse;

std::unique_ptr<transport::RedfishClient> Client(FakeRedfish& fake, const std::string& system = "") {
  transport::RedfishOptions o;
  o.base_url = "https://bmc.example";
  o.credentials = {"admin", transport::Secret("s3cret-PLANTED")};
  o.system = system;
  o.node = "n1";
  o.sleep = [](std::chrono::milliseconds) {};
  o.task_poll = std::chrono::milliseconds(10);
  return std::make_unique<transport::RedfishClient>(std::make_unique<testing::ForwardHttp>(&fake), o);
}

// An HPE Cray EX blade: one BMC, Systems/Node0 and Node1; object-valued BIOS attributes and no
// @Redfish.Settings; firmware Ids prefixed with the system's Id; SimpleUpdate with an ActionInfo
// that lists Targets.
struct CrayBlade {
  FakeRedfish fake;
  CrayBlade() {
    auto& r = fake.resources;
    r.erase("/redfish/v1/Systems");
    for (const char* id : {"Node0", "Node1"}) {
      fake.AddSystem({}, "On", id);
      std::string sys = std::string("/redfish/v1/Systems/") + id;
      r[sys]["Actions"]["#ComputerSystem.Reset"].erase("ResetType@Redfish.AllowableValues");
      r[sys]["Actions"]["#ComputerSystem.Reset"]["@Redfish.ActionInfo"] = sys + "/ResetActionInfo";
      r[sys + "/ResetActionInfo"] = {{"Parameters", {{{"Name", "ResetType"}, {"Required", true},
                                                      {"AllowableValues", {"ForceOff", "On", "Off"}}}}}};
      r[sys]["Bios"] = {{"@odata.id", sys + "/Bios"}};
      r[sys + "/Bios"] = {
          {"@odata.id", sys + "/Bios"},
          {"AttributeRegistry", "BiosAttributeRegistry_v1_0_0"},   // not shipped
          {"Attributes",
           {{"Core Performance Boost", {{"AllowableValues", {"Disabled", "Enabled"}}, {"DataType", "string"},
                                        {"current_value", "Enabled"}, {"default_value", "Enabled"}}},
            {"CrayTesting", {{"DataType", "number"}, {"MinimumValue", 0}, {"MaximumValue", 9},
                             {"current_value", "0"}}}}}};
    }
    r["/redfish/v1/UpdateService"] = {
        {"FirmwareInventory", {{"@odata.id", "/redfish/v1/UpdateService/FirmwareInventory"}}},
        {"Actions", {{"#UpdateService.SimpleUpdate",
                      {{"@Redfish.ActionInfo", "/redfish/v1/UpdateService/SimpleUpdateActionInfo"},
                       {"TransferProtocol@Redfish.AllowableValues", {"HTTP", "HTTPS"}},
                       {"target", "/redfish/v1/UpdateService/Actions/SimpleUpdate"}}}}}};
    r["/redfish/v1/UpdateService/SimpleUpdateActionInfo"] = {{"Parameters", {
        {{"Name", "ImageURI"}, {"Required", true}},
        {{"Name", "TransferProtocol"}, {"Required", true}, {"AllowableValues", {"HTTP", "HTTPS"}}},
        {{"Name", "Targets"}, {"AllowableValues", {"/redfish/v1/UpdateService/FirmwareInventory/Node0.BIOS",
                                                   "/redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS",
                                                   "/redfish/v1/UpdateService/FirmwareInventory/BMC"}}}}}};
    json members = json::array();
    auto fw = [&](const std::string& id, const std::string& version) {
      std::string l = "/redfish/v1/UpdateService/FirmwareInventory/" + id;
      r[l] = {{"@odata.id", l}, {"Id", id}, {"Name", id}, {"Version", version}, {"Updateable", true}};
      members.push_back({{"@odata.id", l}});
    };
    fw("BMC", "nc.1.6.19");
    fw("Node0.BIOS", "ex235n.bios-1.2.1");
    fw("Node1.BIOS", "ex235n.bios-1.2.1");
    fw("Node0.HPCNet0", "1.5.27");
    fw("FPGA0", "2.05");
    r["/redfish/v1/UpdateService/FirmwareInventory"] = {{"Members", members}};
  }
};

}  // namespace

TEST_CASE("bios: object-valued attributes (HPE Cray EX) count by their current_value") {
  CrayBlade b;
  auto node1 = Client(b.fake, "Node1");
  auto facts = BiosModule().ProbeBmc(*node1);
  REQUIRE(facts.ok());
  CHECK(facts.value()["attributes"]["Core Performance Boost"] == "Enabled");
  CHECK(facts.value()["write"] == "in-place");
  // A pin equal to the current value is no drift (the whole object used to be compared).
  CHECK(BiosModule().Diff({{"bios", {{"Core Performance Boost", "Enabled"}, {"CrayTesting", 0}}}},
                          facts.value()).empty());
  auto acts = BiosModule().Diff({{"bios", {{"Core Performance Boost", "Disabled"}}}}, facts.value());
  REQUIRE(acts.size() == 1);
  CHECK(acts[0].before == json{{"Core Performance Boost", "Enabled"}});

  SUBCASE("no @Redfish.Settings: the Bios itself is PATCHed, with the plain value") {
    auto r = ApplyBios(*node1, acts[0]);
    REQUIRE(r.ok());
    CHECK(r.value().find("written to /redfish/v1/Systems/Node1/Bios") != std::string::npos);
    const auto& patch = b.fake.log.back();
    CHECK(patch.method == "PATCH");
    CHECK(patch.path == "/redfish/v1/Systems/Node1/Bios");
    CHECK(json::parse(patch.body) == json{{"Attributes", {{"Core Performance Boost", "Disabled"}}}});
    CHECK(b.fake.Count("PATCH", "/redfish/v1/Systems/Node0/Bios") == 0);
  }
  SUBCASE("values are checked against what the attribute says it allows, before any PATCH") {
    auto bad = BiosModule().Diff({{"bios", {{"Core Performance Boost", "Maybe"}, {"CrayTesting", 12}}}},
                                 facts.value());
    auto r = ApplyBios(*node1, bad.at(0));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("'Maybe' is not one of [Disabled, Enabled]") != std::string::npos);
    CHECK(r.error().message.find("CrayTesting: above 9") != std::string::npos);
    CHECK(b.fake.Count("PATCH", "/redfish/v1/Systems/Node1/Bios") == 0);
  }
}

TEST_CASE("bios: AMI @Redfish.Settings without a SettingsObject - the PATCH-only Bios/SD is used") {
  FakeRedfish fake;
  fake.AddSystem({"On", "ForceOff", "ForceRestart"});
  auto& r = fake.resources;
  r["/redfish/v1/Systems/1"]["Bios"] = {{"@odata.id", "/redfish/v1/Systems/1/Bios"}};
  r["/redfish/v1/Systems/1/Bios"] = {
      {"@odata.id", "/redfish/v1/Systems/1/Bios"},
      {"@Redfish.Settings", {{"ETag", "Dummyetag"}, {"Messages", {{{"MessageId", "Base.1.0.SettingsFailed"}}}}}},
      {"Attributes", {{"GBT0001", "Enabled"}}}};
  int patches = 0;
  fake.handlers["/redfish/v1/Systems/1/Bios/SD"] = [&](const RecordedRequest& q) -> Result<HttpResponse> {
    if (q.method != "PATCH") return FakeRedfish::Error(405, "Base.1.5.OperationNotAllowed", "PATCH only");
    ++patches;
    CHECK(json::parse(q.body) == json{{"Attributes", {{"GBT0001", "Disabled"}}}});
    return FakeRedfish::Reply(204);
  };
  auto bmc = Client(fake);
  auto facts = BiosModule().ProbeBmc(*bmc);
  REQUIRE(facts.ok());
  CHECK(facts.value()["settings"] == "/redfish/v1/Systems/1/Bios/SD");
  CHECK(facts.value()["write"] == "patch-only");
  CHECK(facts.value()["last_apply"][0] == "Base.1.0.SettingsFailed");
  auto acts = BiosModule().Diff({{"bios", {{"GBT0001", "Disabled"}}}}, facts.value());
  auto out = ApplyBios(*bmc, acts.at(0));
  REQUIRE(out.ok());   // was: "no BIOS settings object"
  CHECK(patches == 1);
  CHECK(out.value().find("takes PATCH only") != std::string::npos);
}

TEST_CASE("bios: a BIOS that lists no attributes refuses a pin before any PATCH") {
  FakeRedfish fake;   // OpenBMC-stock: Bios with neither Attributes nor @Redfish.Settings
  fake.AddSystem({"On"});
  fake.resources["/redfish/v1/Systems/1"]["Bios"] = {{"@odata.id", "/redfish/v1/Systems/1/Bios"}};
  fake.resources["/redfish/v1/Systems/1/Bios"] = {{"@odata.id", "/redfish/v1/Systems/1/Bios"}, {"Id", "BIOS"}};
  auto bmc = Client(fake);
  auto facts = BiosModule().ProbeBmc(*bmc);
  REQUIRE(facts.ok());
  auto acts = BiosModule().Diff({{"bios", {{"ProcTurboMode", "Disabled"}}}}, facts.value());
  auto r = ApplyBios(*bmc, acts.at(0));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("ProcTurboMode: not an attribute of this BIOS") != std::string::npos);
  CHECK(r.error().hint.find("lists no attributes") != std::string::npos);
  CHECK(fake.Count("PATCH", "/redfish/v1/Systems/1/Bios") == 0);
}

TEST_CASE("firmware: on a BMC with two systems, a node sees its own items and the shared ones") {
  CrayBlade b;
  auto node1 = Client(b.fake, "Node1");
  auto facts = FirmwareModule().ProbeBmc(*node1);
  REQUIRE(facts.ok());
  std::map<std::string, json> by_id;
  for (const auto& c : facts.value()["components"]) by_id[c["id"].get<std::string>()] = c;
  CHECK(by_id.count("Node0.BIOS") == 0);   // Node0's: not this node's to pin
  CHECK(by_id.count("Node0.HPCNet0") == 0);
  CHECK(by_id["Node1.BIOS"]["scope"] == "system");
  CHECK(by_id["Node1.BIOS"]["short_id"] == "BIOS");
  CHECK(by_id["BMC"]["scope"] == "shared");
  CHECK(by_id["FPGA0"]["scope"] == "shared");

  // A pin by the short name targets this node's device only (both nodes' used to be flashed).
  json desired = {{"firmware", {{"BIOS", "ex235n.bios-1.2.2"}}},
                  {"firmware_images", {{"BIOS", "https://fw.example/BIOS-ex235n.bios-1.2.2.bin"}}}};
  auto acts = FirmwareModule().Diff(desired, facts.value());
  REQUIRE(acts.size() == 1);
  CHECK(acts[0].params["targets"] == json{"/redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS"});

  json sent;
  b.fake.handlers["/redfish/v1/UpdateService/Actions/SimpleUpdate"] = [&](const RecordedRequest& q) -> Result<HttpResponse> {
    sent = json::parse(q.body);
    b.fake.resources["/redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS"]["Version"] = "ex235n.bios-1.2.2";
    return FakeRedfish::Reply(200, {{"@Message.ExtendedInfo", {{{"MessageId", "Base.1.8.Success"}}}}});
  };
  auto r = ApplyFirmware(*node1, acts[0]);
  REQUIRE(r.ok());
  CHECK(sent["Targets"] == json{"/redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS"});
  CHECK(sent["TransferProtocol"] == "HTTPS");
  CHECK(b.fake.resources["/redfish/v1/UpdateService/FirmwareInventory/Node0.BIOS"]["Version"] == "ex235n.bios-1.2.1");

  SUBCASE("no system named on that BMC: firmware, like power and BIOS, is a clear error") {
    auto unnamed = Client(b.fake);
    auto f = FirmwareModule().ProbeBmc(*unnamed);
    REQUIRE_FALSE(f.ok());
    CHECK(f.error().code == "bmc.system.ambiguous");
    CHECK(PowerModule().ProbeBmc(*unnamed).error().code == "bmc.system.ambiguous");
  }
}

TEST_CASE("firmware: a one-system HPE Cray EX blade answers to the same short names") {
  CrayBlade b;
  // The blade's second node is absent: one system, whose items still carry its prefix.
  auto& r = b.fake.resources;
  r["/redfish/v1/Systems"]["Members"] = json::array({{{"@odata.id", "/redfish/v1/Systems/Node0"}}});
  r.erase("/redfish/v1/Systems/Node1");
  json kept = json::array();
  for (const auto& m : r["/redfish/v1/UpdateService/FirmwareInventory"]["Members"])
    if (m["@odata.id"].get<std::string>().find("Node1.") == std::string::npos) kept.push_back(m);
  r["/redfish/v1/UpdateService/FirmwareInventory"]["Members"] = kept;

  auto node = Client(b.fake);   // one system: the node need not name it
  auto facts = FirmwareModule().ProbeBmc(*node);
  REQUIRE(facts.ok());
  std::map<std::string, json> by_id;
  for (const auto& c : facts.value()["components"]) by_id[c["id"].get<std::string>()] = c;
  CHECK(by_id["Node0.BIOS"]["short_id"] == "BIOS");   // was null: `BIOS` matched nothing
  CHECK(by_id["Node0.HPCNet0"]["short_id"] == "HPCNet0");
  CHECK(by_id["Node0.BIOS"]["scope"].is_null());       // nothing to scope with one system
  CHECK(by_id["BMC"]["short_id"].is_null());

  json desired = {{"firmware", {{"BIOS", "ex235n.bios-1.2.2"}}},
                  {"firmware_images", {{"BIOS", "https://fw.example/BIOS-ex235n.bios-1.2.2.bin"}}}};
  auto acts = FirmwareModule().Diff(desired, facts.value());
  REQUIRE(acts.size() == 1);
  CHECK(acts[0].params["found"] == true);
  CHECK(acts[0].params["targets"] == json{"/redfish/v1/UpdateService/FirmwareInventory/Node0.BIOS"});
  CHECK(FirmwareModule().Diff({{"firmware", {{"BIOS", "ex235n.bios-1.2.1"}}}}, facts.value()).empty());
}

TEST_CASE("firmware scope: RelatedItem decides before the Id convention") {
  firmware::SystemsView v{{"/redfish/v1/Systems/Node1", "Node1", {"/redfish/v1/Chassis/Blade1"}},
                          {{"/redfish/v1/Systems/Node0", "Node0", {"/redfish/v1/Chassis/Blade0"}}}};
  auto scope = [&](const json& m) { return firmware::ScopeOf(m, v).scope; };
  using firmware::ItemScope;
  CHECK(scope({{"Id", "gpu"}, {"RelatedItem", {{{"@odata.id", "/redfish/v1/Systems/Node1/Processors/GPU0"}}}}}) == ItemScope::kOwn);
  CHECK(scope({{"Id", "psu"}, {"RelatedItem", {{{"@odata.id", "/redfish/v1/chassis/blade1/"}}}}}) == ItemScope::kOwn);
  CHECK(scope({{"Id", "Node1.X"}, {"RelatedItem", {{{"@odata.id", "/redfish/v1/Chassis/Blade0"}}}}}) == ItemScope::kOther);
  CHECK(scope({{"Id", "bmc"}, {"RelatedItem", {{{"@odata.id", "/redfish/v1/Managers/BMC"}}}}}) == ItemScope::kShared);
  CHECK(scope({{"Id", "Node0.AccFPGA0"}}) == ItemScope::kOther);
  CHECK(scope({{"Id", "Node10.BIOS"}}) == ItemScope::kShared);   // a prefix is a whole Id
  CHECK(firmware::ScopeOf({{"Id", "x"}, {"Name", "Node1.Acc0.VBIOS"}}, v).short_id == "Acc0.VBIOS");
}

TEST_CASE("firmware: listed only under SoftwareInventory - read; a repeated name is pinned by Id") {
  FakeRedfish fake;
  fake.AddSystem({"On"});
  auto& r = fake.resources;
  r["/redfish/v1/UpdateService"] = {
      {"SoftwareInventory", {{"@odata.id", "/redfish/v1/UpdateService/SoftwareInventory"}}},
      {"MultipartHttpPushUri", "/redfish/v1/UpdateService/update"}};
  json members = json::array();
  auto sw = [&](const std::string& id, const std::string& name, const std::string& version) {
    std::string l = "/redfish/v1/UpdateService/SoftwareInventory/" + id;
    r[l] = {{"@odata.id", l}, {"Id", id}, {"Name", name}, {"Version", version}, {"Updateable", true}};
    members.push_back({{"@odata.id", l}});
  };
  sw("a1b2c3", "bmc", "2.15.0");   // the running image
  sw("d4e5f6", "bmc", "2.14.1");   // the backup image, same name
  sw("bios_active", "Host image", "1.4.0");
  r["/redfish/v1/UpdateService/SoftwareInventory"] = {{"Members", members}};
  auto bmc = Client(fake);
  auto facts = FirmwareModule().ProbeBmc(*bmc);   // was: "UpdateService has no FirmwareInventory"
  REQUIRE(facts.ok());
  REQUIRE(facts.value()["components"].size() == 3);
  CHECK(facts.value()["components"][0]["collection"] == "SoftwareInventory");

  auto by_name = FirmwareModule().Diff({{"firmware", {{"bmc", "2.16.0"}}},
                                        {"firmware_images", {{"bmc", "file:/srv/bmc-2.16.0.bin"}}}},
                                       facts.value());
  REQUIRE(by_name.size() == 1);
  CHECK(by_name[0].summary.find("pin by Id (a1b2c3, d4e5f6)") != std::string::npos);
  auto refused = ApplyFirmware(*bmc, by_name[0]);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == "apply.firmware.ambiguous");
  CHECK(fake.Count("POST", "/redfish/v1/UpdateService/update") == 0);

  auto by_id = FirmwareModule().Diff({{"firmware", {{"a1b2c3", "2.16.0"}}}}, facts.value());
  REQUIRE(by_id.size() == 1);
  CHECK(by_id[0].params["targets"] == json{"/redfish/v1/UpdateService/SoftwareInventory/a1b2c3"});
  CHECK(by_id[0].params["ambiguous"].empty());
  CHECK(FirmwareModule().Diff({{"firmware", {{"a1b2c3", "2.15.0"}}}}, facts.value()).empty());
}

TEST_CASE("firmware: SimpleUpdate parameters come from its ActionInfo (AMI MegaRAC)") {
  FakeRedfish fake;
  fake.AddSystem({"On"});
  auto& r = fake.resources;
  r["/redfish/v1/UpdateService"] = {
      {"FirmwareInventory", {{"@odata.id", "/redfish/v1/UpdateService/FirmwareInventory"}}},
      {"Actions", {{"#UpdateService.SimpleUpdate",
                    {{"@Redfish.ActionInfo", "/redfish/v1/UpdateService/SimpleUpdateActionInfo"},
                     {"target", "/redfish/v1/UpdateService/Actions/SimpleUpdate"}}}}}};
  r["/redfish/v1/UpdateService/SimpleUpdateActionInfo"] = {{"Parameters", {
      {{"Name", "ImageURI"}, {"Required", true}},
      {{"Name", "TransferProtocol"}, {"Required", true}, {"AllowableValues", {"HTTP", "FTP"}}},
      {{"Name", "User"}}, {{"Name", "Password"}},
      {{"Name", "UpdateComponent"}, {"AllowableValues", {"BMC", "BIOS", "MB_CPLD"}}}}}};
  json members = json::array();
  for (const char* id : {"BMC", "MB_CPLD1"}) {
    std::string l = std::string("/redfish/v1/UpdateService/FirmwareInventory/") + id;
    r[l] = {{"@odata.id", l}, {"Id", id}, {"Name", id}, {"Version", "1"}, {"Updateable", true}};
    members.push_back({{"@odata.id", l}});
  }
  r["/redfish/v1/UpdateService/FirmwareInventory"] = {{"Members", members}};
  std::vector<json> sent;
  fake.handlers["/redfish/v1/UpdateService/Actions/SimpleUpdate"] = [&](const RecordedRequest& q) -> Result<HttpResponse> {
    json body = json::parse(q.body);
    sent.push_back(body);
    // A BMC that enforces its ActionInfo.
    if (body.contains("Targets")) return FakeRedfish::Error(400, "Base.1.5.ActionParameterUnknown", "Targets");
    if (!body.contains("TransferProtocol")) return FakeRedfish::Error(400, "Base.1.5.ActionParameterMissing", "TransferProtocol");
    r["/redfish/v1/UpdateService/FirmwareInventory/BMC"]["Version"] = "2";
    return FakeRedfish::Reply(204);
  };
  auto bmc = Client(fake);
  auto facts = FirmwareModule().ProbeBmc(*bmc).value();
  CHECK(facts["update_service"]["simple_update_info"] == "/redfish/v1/UpdateService/SimpleUpdateActionInfo");
  auto plan = [&](const std::string& comp, const std::string& image) {
    return FirmwareModule().Diff({{"firmware", {{comp, "2"}}}, {"firmware_images", {{comp, image}}}}, facts).at(0);
  };
  SUBCASE("http: TransferProtocol HTTP, no Targets, UpdateComponent names the component") {
    auto out = ApplyFirmware(*bmc, plan("BMC", "http://fw.example/BMC-2.bin"));
    REQUIRE(out.ok());   // was: HTTP 400 (Targets sent, TransferProtocol not)
    REQUIRE(sent.size() == 1);
    CHECK(sent[0] == json{{"ImageURI", "http://fw.example/BMC-2.bin"}, {"TransferProtocol", "HTTP"},
                          {"UpdateComponent", "BMC"}});
  }
  SUBCASE("https, which the BMC does not take, is refused before anything is sent") {
    auto out = ApplyFirmware(*bmc, plan("BMC", "https://fw.example/BMC-2.bin"));
    REQUIRE_FALSE(out.ok());
    CHECK(out.error().message.find("TransferProtocol HTTP, FTP (its ActionInfo)") != std::string::npos);
    CHECK(out.error().message.find("is HTTPS") != std::string::npos);
    CHECK(out.error().key_path == "firmware_images.BMC");
    CHECK(sent.empty());
  }
  SUBCASE("a component no UpdateComponent value names is refused: the BMC would pick one") {
    auto out = ApplyFirmware(*bmc, plan("MB_CPLD1", "http://fw.example/MB_CPLD1-2.bin"));
    REQUIRE_FALSE(out.ok());
    CHECK(out.error().message.find("none of them is MB_CPLD1's Id or Name") != std::string::npos);
    CHECK(sent.empty());
  }
}

TEST_CASE("firmware: the task's UpdateSuccessful is trusted over an inventory that lags") {
  CrayBlade b;
  auto bmc = Client(b.fake, "Node1");
  auto facts = FirmwareModule().ProbeBmc(*bmc).value();
  json desired = {{"firmware", {{"BMC", "nc.1.7.0"}}},
                  {"firmware_images", {{"BMC", "https://fw.example/BMC-nc.1.7.0.bin"}}}};
  auto act = FirmwareModule().Diff(desired, facts).at(0);
  std::string says = "Update.1.0.UpdateSuccessful";
  b.fake.handlers["/redfish/v1/UpdateService/Actions/SimpleUpdate"] = [&](const RecordedRequest&) -> Result<HttpResponse> {
    return FakeRedfish::Reply(202, json(), {{"location", "/redfish/v1/TaskService/TaskMonitors/1"}});
  };
  b.fake.handlers["/redfish/v1/TaskService/TaskMonitors/1"] = [&](const RecordedRequest&) -> Result<HttpResponse> {
    return FakeRedfish::Reply(200, {{"@odata.id", "/redfish/v1/TaskService/Tasks/1"}, {"TaskState", "Completed"},
                                    {"Messages", {{{"MessageId", says}, {"Message", "Device 'BMC' updated"}}}}});
  };
  SUBCASE("UpdateSuccessful, inventory still old: updated, not 'staged, applies on reset'") {
    auto r = ApplyFirmware(*bmc, act);
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().staged);
    CHECK(r.value().inventory_lags);
    CHECK(r.value().Describe().find("updated via SimpleUpdate to nc.1.7.0 (the task says UpdateSuccessful; "
                                    "the inventory still shows nc.1.6.19") != std::string::npos);
  }
  SUBCASE("AwaitToActivate: staged for the next reset") {
    says = "Update.1.0.AwaitToActivate";
    auto r = ApplyFirmware(*bmc, act);
    REQUIRE(r.ok());
    CHECK(r.value().staged);
    CHECK(r.value().Describe().find("staged via SimpleUpdate, applies on reset (the task says AwaitToActivate") !=
          std::string::npos);
  }
  CHECK(firmware::VerdictOf({"Update.1.0.UpdateSuccessful", "Base.1.8.ResetRequired"}) == firmware::TaskVerdict::kStaged);
  CHECK(firmware::VerdictOf({"Base.1.8.Success"}) == firmware::TaskVerdict::kUnknown);
}

TEST_CASE("power: on a shared BMC the node's own system is read and reset") {
  CrayBlade b;
  b.fake.resources["/redfish/v1/Systems/Node1"]["PowerState"] = "Off";
  auto node1 = Client(b.fake, "Node1");
  auto f = PowerModule().ProbeBmc(*node1);
  REQUIRE(f.ok());
  CHECK(f.value()["power_state"] == "Off");
  CHECK(f.value()["system"] == "/redfish/v1/Systems/Node1");
}

}  // namespace plumb::modules
