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
using firmware::UpdateWatch;
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

namespace {

// A SimpleUpdate of the BMC (FirmwareInventory/2, 24.01.01 -> 24.09.17) on the Bench: the action
// and a Diff's action for it.
const char* kSimpleUpdate = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate";
const char* kBmcItem = "/redfish/v1/UpdateService/FirmwareInventory/2";
const char* kMonitor = "/redfish/v1/TaskService/TaskMonitors/1";
const char* kTask = "/redfish/v1/TaskService/Tasks/1";

Action BmcUpdate(Bench& b) {
  json desired = {{"firmware", {{"BMC", "24.09.17"}}},
                  {"firmware_images", {{"BMC", "https://fw.example/BMC-24.09.17.bin"}}}};
  auto acts = FirmwareModule().Diff(desired, FirmwareModule().ProbeBmc(*b.bmc).value());
  REQUIRE(acts.size() == 1);
  return acts[0];
}

json TaskBody(const std::string& state, const std::string& status, const std::string& message_id) {
  json t = {{"@odata.id", kTask}, {"TaskState", state}, {"TaskStatus", status}, {"Messages", json::array()}};
  if (!message_id.empty()) t["Messages"].push_back({{"MessageId", message_id}, {"Message", "said"}});
  return t;
}

}  // namespace

TEST_CASE("firmware: a task Completed with TaskStatus Critical and ApplyFailed failed") {
  Bench b;
  b.fake.handlers[kSimpleUpdate] = [&](const RecordedRequest&) -> Result<HttpResponse> {
    return FakeRedfish::Reply(202, json(), {{"location", kMonitor}});
  };
  b.fake.handlers[kMonitor] = [&](const RecordedRequest&) -> Result<HttpResponse> {
    return FakeRedfish::Reply(200, TaskBody("Completed", "Critical", "Update.1.0.ApplyFailed"));
  };
  Action a = BmcUpdate(b);
  auto r = ApplyFirmware(*b.bmc, a);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("failed") != std::string::npos);
  CHECK(r.error().message.find("TaskStatus Critical") != std::string::npos);
  CHECK(r.error().message.find("ApplyFailed") != std::string::npos);
  CHECK(r.error().message.find("the inventory shows 24.01.01") != std::string::npos);
  modules::NodeContext ctx;
  ctx.bmc = b.bmc.get();
  CHECK(FirmwareModule().Apply(ctx, a).kind == ApplyOutcome::Kind::kFailed);
  SUBCASE("a failure message alone fails a task that says OK") {
    b.fake.handlers[kMonitor] = [&](const RecordedRequest&) -> Result<HttpResponse> {
      return FakeRedfish::Reply(200, TaskBody("Completed", "OK", "Update.1.1.VerificationFailed"));
    };
    auto r2 = ApplyFirmware(*b.bmc, a);
    REQUIRE_FALSE(r2.ok());
    CHECK(r2.error().message.find("VerificationFailed") != std::string::npos);
  }
}

TEST_CASE("firmware: an end that could not be read is decided by the inventory") {
  Bench b;
  bool applies = false;
  b.fake.handlers[kSimpleUpdate] = [&](const RecordedRequest&) -> Result<HttpResponse> {
    if (applies) b.fake.resources[kBmcItem]["Version"] = "24.09.17";
    return FakeRedfish::Reply(202, json(), {{"location", kMonitor}});
  };
  // The monitor's last answer (and the Task's) stops halfway.
  std::string full = TaskBody("Completed", "OK", "").dump();
  HttpResponse cut;
  cut.status = 200;
  cut.body = full.substr(0, full.size() / 2);
  b.fake.handlers[kMonitor] = [&](const RecordedRequest&) -> Result<HttpResponse> { return cut; };
  b.fake.handlers[kTask] = [&](const RecordedRequest&) -> Result<HttpResponse> { return cut; };
  Action a = BmcUpdate(b);
  SUBCASE("the version did not change: failed, never 'staged'") {
    auto r = ApplyFirmware(*b.bmc, a);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("unknown") != std::string::npos);
    CHECK(r.error().message.find("not JSON") != std::string::npos);
    CHECK(r.error().message.find("still shows 24.01.01") != std::string::npos);
    CHECK_FALSE(r.error().hint.empty());
  }
  SUBCASE("the version changed: updated, by the inventory") {
    applies = true;
    auto r = ApplyFirmware(*b.bmc, a);
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().staged);
    CHECK(r.value().Describe().find("updated via SimpleUpdate to 24.09.17 (by the inventory") == 0);
  }
}

TEST_CASE("firmware: an answer without a task is read back before it is called staged") {
  Bench b;
  int reads_until_applied = 3;   // a BMC without a TaskService that applies a moment later
  b.fake.handlers[kSimpleUpdate] = [&](const RecordedRequest&) -> Result<HttpResponse> {
    return FakeRedfish::Reply(200, {{"@Message.ExtendedInfo", {{{"MessageId", "Base.1.8.Success"}}}}});
  };
  b.fake.handlers[kBmcItem] = [&](const RecordedRequest&) -> Result<HttpResponse> {
    json m = b.fake.resources[kBmcItem];
    if (b.fake.Count("POST", kSimpleUpdate) > 0 && --reads_until_applied <= 0) m["Version"] = "24.09.17";
    return FakeRedfish::Reply(200, m);
  };
  Action a = BmcUpdate(b);
  SUBCASE("it shows a moment later: updated") {
    auto r = ApplyFirmware(*b.bmc, a);
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().staged);
    CHECK(r.value().version_now == "24.09.17");
  }
  SUBCASE("it never shows: staged, after reading for the settle time") {
    reads_until_applied = 1000;
    UpdateWatch w;
    w.settle = std::chrono::seconds(20);
    w.settle_poll = std::chrono::seconds(2);
    const int before = b.fake.Count("GET", kBmcItem);
    auto r = ApplyFirmware(*b.bmc, a, w);
    REQUIRE(r.ok());
    CHECK(r.value().staged);
    CHECK(b.fake.Count("GET", kBmcItem) - before == 11);   // once, then every 2 s for 20 s
  }
}

TEST_CASE("firmware: an update in flight is said before the wait; a resumed one follows its task") {
  Bench b;
  b.fake.handlers[kSimpleUpdate] = [&](const RecordedRequest&) -> Result<HttpResponse> {
    return FakeRedfish::Reply(202, TaskBody("Running", "OK", ""), {{"location", kMonitor}});
  };
  Action a = BmcUpdate(b);
  json said;
  modules::NodeContext ctx;
  ctx.bmc = b.bmc.get();
  ctx.in_flight = [&](const json& f) {
    said = f;
    CHECK(b.fake.Count("GET", kMonitor) == 0);
  };
  std::vector<std::string> progress;
  ctx.progress = [&](const transport::WaitProgress& p) { progress.push_back(p.Text()); };
  b.fake.handlers[kMonitor] = [&](const RecordedRequest&) -> Result<HttpResponse> {
    if (b.fake.Count("GET", kMonitor) < 3) return FakeRedfish::Reply(202, TaskBody("Running", "OK", ""));
    b.fake.resources[kBmcItem]["Version"] = "24.09.17";
    return FakeRedfish::Reply(200, TaskBody("Completed", "OK", "Update.1.0.UpdateSuccessful"));
  };
  ApplyOutcome o = FirmwareModule().Apply(ctx, a);
  REQUIRE(o.ok());
  CHECK(said["task"] == kTask);
  CHECK(said["monitor"] == kMonitor);
  CHECK(said["method"] == "SimpleUpdate");
  CHECK(said["wanted"] == "24.09.17");
  REQUIRE(progress.size() >= 2);
  CHECK(progress[0].find(std::string("task ") + kTask + ": Running") == 0);

  SUBCASE("resumed: the task is followed, nothing is POSTed again") {
    b.fake.resources[kBmcItem]["Version"] = "24.01.01";
    Action again = BmcUpdate(b);
    again.params["in_flight"] = said;
    b.fake.handlers.erase(kMonitor);   // the monitor is gone; the Task remains
    b.fake.resources[kTask] = TaskBody("Completed", "OK", "Update.1.0.AwaitToActivate");
    const int posts = b.fake.Count("POST", kSimpleUpdate);
    auto r = ApplyFirmware(*b.bmc, again);
    REQUIRE(r.ok());
    CHECK(r.value().staged);
    CHECK(b.fake.Count("POST", kSimpleUpdate) == posts);
  }
  SUBCASE("resumed, the task is gone and the version unchanged: failed, not flashed again") {
    b.fake.resources[kBmcItem]["Version"] = "24.01.01";
    Action again = BmcUpdate(b);
    again.params["in_flight"] = said;
    b.fake.handlers.erase(kMonitor);
    const int posts = b.fake.Count("POST", kSimpleUpdate);
    auto r = ApplyFirmware(*b.bmc, again);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("unknown") != std::string::npos);
    CHECK(b.fake.Count("POST", kSimpleUpdate) == posts);
  }
}

TEST_CASE("firmware: verdicts from message ids - a failure wins over staging over success") {
  using firmware::TaskVerdict;
  using firmware::VerdictOf;
  CHECK(VerdictOf({"Update.1.0.UpdateSuccessful"}) == TaskVerdict::kApplied);
  CHECK(VerdictOf({"Update.1.0.UpdateSuccessful", "Update.1.0.AwaitToActivate"}) == TaskVerdict::kStaged);
  CHECK(VerdictOf({"Update.1.0.AwaitToActivate", "Update.1.0.ApplyFailed"}) == TaskVerdict::kFailed);
  CHECK(VerdictOf({"Update.1.2.TransferFailed"}) == TaskVerdict::kFailed);
  CHECK(VerdictOf({"Update.1.0.NoTargetsDetermined"}) == TaskVerdict::kFailed);
  CHECK(VerdictOf({"Base.1.8.Success"}) == TaskVerdict::kUnknown);
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

// ---- facts schemas (modules/{firmware,bios,power}/facts.schema.json) ----
#include "schemas/embedded.h"

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

namespace plumb::modules {
namespace {

bool ValidFacts(const std::string& module, const nlohmann::json& facts) {
  auto text = plumb::schemas::FindEmbedded("facts/" + module + ".schema.json");
  REQUIRE(text.has_value());
  nlohmann::json doc = nlohmann::json::parse(*text);
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
