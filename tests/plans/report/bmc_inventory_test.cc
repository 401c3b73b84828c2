// `plumb bmc inventory`'s output (plans/report/bmc_inventory.h): a line per node, each read
// error once, the count, and the JSON document.
#include <doctest/doctest.h>

#include "modules/bmc_modules.h"
#include "plans/report/bmc_inventory.h"

using namespace plumb;
using namespace plumb::plans::report;

namespace {

plans::BmcObservation InventoryReadBmc() {
  plans::BmcObservation o;
  o.node = "gpu001";
  o.url = "https://127.0.0.1:8443";
  o.reachable = true;
  o.facts.emplace("power", modules::Facts{{"power_state", "On"}, {"health", "OK"}});
  o.facts.emplace("firmware", modules::Facts{{"components", nlohmann::json::array({1, 2, 3})}});
  o.facts.emplace("bios", modules::Facts{{"attributes", {{"A", 1}, {"B", 2}}}, {"pending", {{"B", 3}}}});
  return o;
}

plans::BmcObservation InventoryUnreadable() {
  plans::BmcObservation o;
  o.node = "gpu002";
  o.reachable = true;
  const Diagnostic no_system = Diagnostic::Error("bmc.system", "no system named");
  o.facts.emplace("bios", Result<modules::Facts>(no_system));
  o.facts.emplace("power", Result<modules::Facts>(no_system));
  return o;
}

plans::BmcObservation InventoryUnreachable() {
  plans::BmcObservation o;
  o.node = "gpu003";
  o.error = Diagnostic::Error("bmc.tls", "certificate not trusted", {}, {}, "set bmc.ca");
  return o;
}

}  // namespace

TEST_CASE("bmc_inventory: each module's summary, in the facts' order") {
  CHECK(BmcSummaryLine(InventoryReadBmc(), modules::BmcModules()) ==
        "gpu001       bios 2 attributes (1 pending) firmware 3 components power On health OK");
  CHECK(BmcSummaryLine(InventoryUnreadable(), modules::BmcModules()) == "gpu002       bios: error bmc.system power: error bmc.system");
  CHECK(BmcSummaryLine(InventoryUnreachable(), modules::BmcModules()) ==
        "gpu003       unreachable [bmc.tls]: certificate not trusted\n  hint: set bmc.ca");
}

TEST_CASE("bmc_inventory: a module says its part only when the registry given has it") {
  CHECK(BmcSummaryLine(InventoryReadBmc(), {}) == "gpu001      ");
  plans::BmcObservation power = InventoryReadBmc();
  power.facts.erase("bios");
  power.facts.erase("firmware");
  power.facts.insert_or_assign("power", modules::Facts{{"power_state", "Off"}});   // no health: "?"
  CHECK(BmcSummaryLine(power, modules::BmcModules()) == "gpu001       power Off health ?");
  // Facts without the keys a summary counts: nothing is read past them (ASan checks this).
  plans::BmcObservation bare = InventoryReadBmc();
  bare.facts.insert_or_assign("bios", modules::Facts::object());
  bare.facts.insert_or_assign("firmware", modules::Facts::object());
  bare.facts.insert_or_assign("power", modules::Facts::object());
  CHECK(BmcSummaryLine(bare, modules::BmcModules()) ==
        "gpu001       bios 0 attributes (0 pending) firmware 0 components power ? health ?");
}

TEST_CASE("bmc_inventory: all read, or partial when a BMC or a module of one was not") {
  CHECK_FALSE(BmcInventoryPartial({InventoryReadBmc()}));
  CHECK(BmcInventoryPartial({InventoryReadBmc(), InventoryUnreadable()}));
  CHECK(BmcInventoryPartial({InventoryUnreachable()}));
  CHECK(BmcInventoryText({InventoryReadBmc()}, modules::BmcModules()) ==
        "gpu001       bios 2 attributes (1 pending) firmware 3 components power On health OK\n"
        "1 BMCs, all read\n");
}

TEST_CASE("bmc_inventory: one cause failing every module is said once") {
  const std::string text = BmcInventoryText({InventoryUnreadable(), InventoryUnreachable()}, modules::BmcModules());
  const std::string err = "  " + Diagnostic::Error("bmc.system", "no system named").ToString() + "\n";
  CHECK(text == "gpu002       bios: error bmc.system power: error bmc.system\n" + err +
                    "gpu003       unreachable [bmc.tls]: certificate not trusted\n  hint: set bmc.ca\n"
                    "2 BMCs, some unreadable\n");
}

TEST_CASE("bmc_inventory: the JSON document names its format and every node") {
  const nlohmann::json doc = BmcInventoryJson({InventoryReadBmc(), InventoryUnreachable()});
  CHECK(doc["format"] == "plumb.bmc-inventory/v1");
  REQUIRE(doc["nodes"].size() == 2);
  CHECK(doc["nodes"][0] == plans::ToJson(InventoryReadBmc()));
  CHECK(doc["nodes"][1] == plans::ToJson(InventoryUnreachable()));
}
