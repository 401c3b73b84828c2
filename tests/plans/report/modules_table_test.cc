// `plumb modules` (plans/report/modules_table.h): a markdown row and a JSON object per module,
// each saying its keys, channel, reads, changes and disruption.
#include <doctest/doctest.h>

#include "plans/report/modules_table.h"

using namespace plumb;

namespace {

class TableModule final : public modules::Module {
 public:
  explicit TableModule(modules::ModuleInfo info) : info_(std::move(info)) {}
  const modules::ModuleInfo& Info() const override { return info_; }
  std::vector<modules::Action> Diff(const nlohmann::json&, const modules::Facts&) const override {
    return {};
  }

 private:
  modules::ModuleInfo info_;
};

TableModule TableDriver() {
  return TableModule({.name = "nvidia_driver",
                      .owns = {"/nvidia/driver", "/nvidia/persistence_mode"},
                      .after = {"kernel"},
                      .reads = "nvidia-smi",
                      .changes = "apt install",
                      .disruption = modules::Disruption::kReboot,
                      .disruption_by_key = {{"/nvidia/persistence_mode", modules::Disruption::kNone}}});
}

TableModule TableFirmware() {
  return TableModule({.name = "firmware",
                      .owns = {"/firmware"},
                      .channel = modules::Channel::kBmc,
                      .reads = "FirmwareInventory",
                      .changes = "SimpleUpdate",
                      .disruption = modules::Disruption::kFirmwareFlash});
}

TableModule TableOs() {
  return TableModule({.name = "os", .reads = "/etc/os-release", .changes = "-"});
}

TableModule TableDcgm() {
  return TableModule({.name = "dcgm", .owns = {"/health/dcgm"}, .reads = "dcgmi diag", .changes = "-",
                      .kind = modules::ModuleInfo::Kind::kHealth, .on_demand = true});
}

}  // namespace

TEST_CASE("modules_table: the markdown table, a row per module in order") {
  const TableModule d = TableDriver(), f = TableFirmware(), o = TableOs();
  CHECK(plans::report::ModulesMarkdown({&d, &f, &o}) ==
        "| module | reads | desired key | change | disruption |\n"
        "|---|---|---|---|---|\n"
        "| nvidia_driver | nvidia-smi | `nvidia.driver`, `nvidia.persistence_mode` | apt install | "
        "reboot; persistence_mode: none |\n"
        "| firmware (BMC) | FirmwareInventory | `firmware` | SimpleUpdate | firmware-flash |\n"
        "| os | /etc/os-release | - | - | - |\n");
}

TEST_CASE("modules_table: the JSON, every field of a module") {
  const TableModule d = TableDriver(), f = TableFirmware(), h = TableDcgm();
  const nlohmann::json j = plans::report::ModulesJson({&d, &f, &h});
  REQUIRE(j.size() == 3);
  CHECK(j[0] == nlohmann::json{{"name", "nvidia_driver"},
                               {"owns", {"/nvidia/driver", "/nvidia/persistence_mode"}},
                               {"channel", "ssh"},
                               {"after", {"kernel"}},
                               {"reads", "nvidia-smi"},
                               {"changes", "apt install"},
                               {"disruption", "reboot; persistence_mode: none"},
                               {"kind", "state"},
                               {"on_demand", false}});
  CHECK(j[1]["channel"] == "bmc");
  CHECK(j[1]["after"] == nlohmann::json::array());
  CHECK(j[2]["kind"] == "health");
  CHECK(j[2]["on_demand"] == true);
}
