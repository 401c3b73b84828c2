// Firmware versions as vendors report them (issue 32, "Vendor forms"): HPE iLO appends the
// image's build date to Version ("2.70 May 16 2022", "A47 v2.58 (05/19/2022)"), so a pin of the
// version alone must match it, or every apply flashes again. Shapes from the XL675d_A100 mockup
// in ../shared/redfish-mockups, written here.
#include <doctest/doctest.h>

#include "fakes/fake_redfish.h"
#include "fakes/forward_http.h"
#include "modules/firmware/firmware.h"
#include "modules/firmware/outcome.h"
#include "modules/firmware/version_match.h"
#include "modules/transport/redfish_client.h"

namespace plumb::modules {
namespace {

using firmware::ApplyFirmware;
using firmware::FirmwareModule;
using firmware::VersionMatches;
using nlohmann::json;
using testing::FakeRedfish;
using testing::RecordedRequest;
using transport::HttpResponse;

// An iLO 5: SimpleUpdate answered 200 with no task, versions with their build dates.
struct Ilo {
  FakeRedfish fake;
  std::unique_ptr<transport::RedfishClient> bmc;
  Ilo() {
    fake.AddSystem({"On", "ForceOff", "ForceRestart"});
    auto& r = fake.resources;
    r["/redfish/v1/UpdateService"] = {
        {"FirmwareInventory", {{"@odata.id", "/redfish/v1/UpdateService/FirmwareInventory"}}},
        {"Actions", {{"#UpdateService.SimpleUpdate",
                      {{"target", "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"},
                       {"TransferProtocol@Redfish.AllowableValues", {"HTTP", "HTTPS"}}}}}}};
    json members = json::array();
    auto fw = [&](const std::string& id, const std::string& name, const std::string& version) {
      std::string l = "/redfish/v1/UpdateService/FirmwareInventory/" + id + "/";
      r[l] = {{"@odata.id", l}, {"Id", id}, {"Name", name}, {"Version", version}, {"Updateable", true}};
      members.push_back({{"@odata.id", l}});
    };
    fw("1", "iLO 5", "2.70 May 16 2022");
    fw("2", "System ROM", "A47 v2.58 (05/19/2022)");
    r["/redfish/v1/UpdateService/FirmwareInventory"] = {{"Members", members}};
    transport::RedfishOptions o;
    o.base_url = "https://bmc.example";
    o.credentials = {"admin", transport::Secret("s3cret-PLANTED")};
    o.sleep = [](std::chrono::milliseconds) {};
    bmc = std::make_unique<transport::RedfishClient>(std::make_unique<testing::ForwardHttp>(&fake), o);
  }
};

}  // namespace

TEST_CASE("firmware version match: the pin, or the pin and the vendor's build date") {
  CHECK(VersionMatches("2.70", "2.70"));
  CHECK(VersionMatches(" 2.70", "2.70 "));
  CHECK(VersionMatches("2.70", "2.70 May 16 2022"));
  CHECK(VersionMatches("2.60", "2.60 Mar 1 2022"));
  CHECK(VersionMatches("A47 v2.58", "A47 v2.58 (05/19/2022)"));
  CHECK(VersionMatches("A43 v2.52", "A43 v2.52 (10/29/2021)"));
  CHECK(VersionMatches("1.2.3", "1.2.3 (2024-06-01)"));
  CHECK(VersionMatches("2.70 May 16 2022", "2.70 May 16 2022"));   // a dated pin: that build
  CHECK_FALSE(VersionMatches("2.70 May 16 2022", "2.70 Jun 01 2024"));
  CHECK_FALSE(VersionMatches("2.70 May 16 2022", "2.70"));
  CHECK_FALSE(VersionMatches("2.7", "2.70"));
  CHECK_FALSE(VersionMatches("2.7", "2.70 May 16 2022"));
  CHECK_FALSE(VersionMatches("2.70", "2.70.1"));
  CHECK_FALSE(VersionMatches("2.70", "2.70 Build 3"));
  CHECK_FALSE(VersionMatches("2.70", "2.70 Foo 16 2022"));       // not a month
  CHECK_FALSE(VersionMatches("2.70", "2.70 May 16 22"));         // not a four-digit year
  CHECK_FALSE(VersionMatches("2.70", "2.70  May 16 2022"));      // one space, as vendors write it
  CHECK_FALSE(VersionMatches("2.70", "2.70 (05/19/2022) x"));    // the date ends the string
  CHECK_FALSE(VersionMatches("A47", "A47 v2.58 (05/19/2022)"));  // the family is not a version
  CHECK_FALSE(VersionMatches("", "May 16 2022"));
  CHECK(firmware::VersionWithoutBuildDate("2.70 May 16 2022") == "2.70");
  CHECK(firmware::VersionWithoutBuildDate("A47 v2.58 (05/19/2022)") == "A47 v2.58");
  CHECK(firmware::VersionWithoutBuildDate("9.1.0 Build 27") == "9.1.0 Build 27");
}

TEST_CASE("firmware: a pin of the version alone is in sync with iLO's dated Version") {
  Ilo ilo;
  auto facts = FirmwareModule().ProbeBmc(*ilo.bmc);
  REQUIRE(facts.ok());
  // Before the rule, both pins differed forever: every apply flashed again.
  CHECK(FirmwareModule().Diff({{"firmware", {{"iLO 5", "2.70"}, {"System ROM", "A47 v2.58"}}}},
                              facts.value()).empty());
  CHECK(FirmwareModule().Diff({{"firmware", {{"iLO 5", "2.70 May 16 2022"}}}}, facts.value()).empty());
  auto acts = FirmwareModule().Diff({{"firmware", {{"iLO 5", "2.80"}, {"System ROM", "A47 v2.58"}}}},
                                    facts.value());
  REQUIRE(acts.size() == 1);
  CHECK(acts[0].summary == "flash iLO 5 2.80 (have 2.70 May 16 2022)");
}

TEST_CASE("firmware outcome: an inventory that shows the pin with its build date shows the pin") {
  firmware::TaskReport done;   // completed, saying neither UpdateSuccessful nor staged
  done.had_task = true;
  done.state = "Completed";
  done.task_status = "OK";
  done.end = "Completed";
  auto out = firmware::Decide(done, "2.80", {"2.80 Jun 01 2024"});
  CHECK_FALSE(out.staged);   // it was "staged (inventory still shows 2.80 Jun 01 2024)"
  auto old = firmware::Decide(done, "2.80", {"2.70 May 16 2022"});
  CHECK(old.staged);
  CHECK(old.version_now == "2.70 May 16 2022");
}

TEST_CASE("firmware: an iLO update that reports the new version with its date is done, not staged") {
  Ilo ilo;
  auto facts = FirmwareModule().ProbeBmc(*ilo.bmc).value();
  auto acts = FirmwareModule().Diff(
      {{"firmware", {{"iLO 5", "2.80"}}},
       {"firmware_images", {{"iLO 5", "https://fw.example/iLO%205-2.80.bin"}}}},
      facts);
  REQUIRE(acts.size() == 1);
  ilo.fake.handlers["/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"] =
      [&](const RecordedRequest&) -> Result<HttpResponse> {
    ilo.fake.resources["/redfish/v1/UpdateService/FirmwareInventory/1/"]["Version"] = "2.80 Jun 01 2024";
    return FakeRedfish::Reply(200, {{"error", {{"code", "iLO.0.10.ExtendedInfo"},
                                               {"@Message.ExtendedInfo", {{{"MessageId", "Base.1.4.Success"}}}}}}});
  };
  auto r = ApplyFirmware(*ilo.bmc, acts[0]);
  REQUIRE(r.ok());
  CHECK_FALSE(r->staged);
  CHECK(r->Describe().find("updated via SimpleUpdate") == 0);
  // And the next plan is empty.
  CHECK(FirmwareModule().Diff({{"firmware", {{"iLO 5", "2.80"}}}},
                              FirmwareModule().ProbeBmc(*ilo.bmc).value()).empty());
}

}  // namespace plumb::modules
