#include "modules/transport/system_select.h"

#include <doctest/doctest.h>

namespace plumb::transport {

TEST_CASE("system select: the only system, or the one named (exact first, then any case)") {
  CHECK(LastSegment("/redfish/v1/systems/1/") == "1");
  CHECK(LastSegment("/redfish/v1/Systems/Node1?$select=Id") == "Node1");
  CHECK(SelectSystem({"/redfish/v1/Systems/1"}, "", "https://b", "").value() == "/redfish/v1/Systems/1");
  std::vector<std::string> cray = {"/redfish/v1/Systems/Node0", "/redfish/v1/Systems/Node1"};
  CHECK(SelectSystem(cray, "Node1", "https://b", "n1").value() == "/redfish/v1/Systems/Node1");
  CHECK(SelectSystem(cray, "node1", "https://b", "n1").value() == "/redfish/v1/Systems/Node1");
  CHECK(SelectSystem({"/redfish/v1/systems/1/"}, "1", "https://b", "").value() == "/redfish/v1/systems/1/");
}

TEST_CASE("system select: several and none named, or a name that is not there, say which exist") {
  std::vector<std::string> cray = {"/redfish/v1/Systems/Node0", "/redfish/v1/Systems/Node1"};
  auto none = SelectSystem(cray, "", "https://blade-bmc.example", "x1000c0s0b0n1");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code == "bmc.system.ambiguous");
  CHECK(none.error().message ==
        "node x1000c0s0b0n1: https://blade-bmc.example manages 2 systems (Node0, Node1) and the "
        "node does not say which one is its own");
  CHECK(none.error().key_path == "bmc_system");
  auto wrong = SelectSystem(cray, "Node2", "https://b", "");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().hint == "set bmc_system to one of: Node0, Node1");
  CHECK(SelectSystem({}, "", "https://b", "").error().code == "bmc.payload");
}

}  // namespace plumb::transport
