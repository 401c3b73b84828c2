#include "modules/transport/action_info.h"

#include <doctest/doctest.h>

namespace plumb::transport {

using nlohmann::json;

TEST_CASE("action info: ActionInfo parameters and inline AllowableValues, merged") {
  // AMI MegaRAC (Gigabyte mockup): the parameters are only in the ActionInfo.
  json action = {{"@Redfish.ActionInfo", "/redfish/v1/UpdateService/SimpleUpdateActionInfo"},
                 {"target", "/redfish/v1/UpdateService/Actions/SimpleUpdate"}};
  json info = {{"Parameters",
                {{{"Name", "ImageURI"}, {"Required", true}},
                 {{"Name", "TransferProtocol"}, {"Required", true}, {"AllowableValues", {"HTTP", "FTP"}}},
                 {{"Name", "UpdateComponent"}, {"AllowableValues", {"BMC", "BIOS"}}}}}};
  ActionSpec s = ParseActionSpec(action, info);
  CHECK(s.declared);
  CHECK(s.target == "/redfish/v1/UpdateService/Actions/SimpleUpdate");
  REQUIRE(s.Find("TransferProtocol"));
  CHECK(s.Find("TransferProtocol")->required);
  CHECK(s.Find("TransferProtocol")->Allows("HTTP"));
  CHECK_FALSE(s.Find("TransferProtocol")->Allows("HTTPS"));
  CHECK_FALSE(s.Accepts("Targets"));   // an ActionInfo that leaves it out
  CHECK(s.Find("ImageURI")->Allows("anything"));   // no list

  // Inline only (iLO): nothing declared, everything accepted, the list still applies.
  ActionSpec inline_only = ParseActionSpec(
      {{"target", "/t"}, {"TransferProtocol@Redfish.AllowableValues", {"HTTP", "HTTPS"}}}, nullptr);
  CHECK_FALSE(inline_only.declared);
  CHECK(inline_only.Accepts("Targets"));
  CHECK(inline_only.Find("TransferProtocol")->Allows("HTTPS"));
  CHECK_FALSE(inline_only.Find("TransferProtocol")->Allows("FTP"));

  // Both (HPE Cray EX): the ActionInfo's list is kept.
  ActionSpec both = ParseActionSpec(
      {{"target", "/t"}, {"TransferProtocol@Redfish.AllowableValues", {"HTTP", "HTTPS", "FTP"}}},
      {{"Parameters", {{{"Name", "TransferProtocol"}, {"AllowableValues", {"HTTPS"}}}}}});
  CHECK_FALSE(both.Find("TransferProtocol")->Allows("FTP"));
}

}  // namespace plumb::transport
