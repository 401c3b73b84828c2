#include <doctest/doctest.h>

#include "plans/plan/keys.h"
#include "plans/report/desired_diff.h"
#include "plans/report/report_fixture.h"

using namespace plumb;
using namespace plumb::plans::report;

TEST_CASE("desired diff: per node and key, identical nodes collapsed, added/removed nodes") {
  testing::ReportWorld w;
  plans::DesiredByNode before = w.desired, after = w.desired;
  for (auto& [n, nd] : after) {
    nd.desired.Mut()["nvidia"]["driver"] = "560.35.03";
    nd.origins.Mut()["/nvidia/driver"] = {"stacks/h100.yaml", 2, 19};
  }
  after["gpu004"].desired.Mut()["sysctl"].erase("vm.swappiness");
  after["gpu003"].desired.Mut()["packages"] = {{"dcgm", "1:3.3.7"}};
  after.erase("gpu002");
  after["gpu005"] = after["gpu001"];
  after["gpu005"].node = "gpu005";
  DesiredDiff d = DiffDesired(before, after);
  REQUIRE(d.nodes.size() == 5);
  CHECK(d.nodes[1].node == "gpu002");
  CHECK(d.nodes[1].kind == NodeDiff::Kind::kRemoved);
  CHECK(d.nodes[4].kind == NodeDiff::Kind::kAdded);
  REQUIRE(d.nodes[0].changes.size() == 1);
  CHECK(d.nodes[0].changes[0].key == "nvidia.driver");
  CHECK(d.nodes[0].changes[0].before == "550.90.07");
  CHECK(d.nodes[0].changes[0].after == "560.35.03");
  CHECK(d.nodes[2].changes.size() == 2);   // driver + package added
  d.from = "aaaa";
  d.to = "bbbb";
  std::string t = DesiredDiffToText(d);
  CHECK(t.find("~ gpu001  [reboot]\n    ~ nvidia.driver: 550.90.07 -> 560.35.03  (reboot)  "
               "stacks/h100.yaml:2:19") != std::string::npos);
  CHECK(t.find("    + packages.dcgm: (absent) -> 1:3.3.7  (drain)") != std::string::npos);
  CHECK(t.find("    - sysctl.vm.swappiness: 10 -> (absent)  (none)") != std::string::npos);
  CHECK(t.find("- gpu002 (removed node)") != std::string::npos);
  CHECK(t.find("+ gpu005 (added node)") != std::string::npos);
  std::string md = DesiredDiffToMarkdown(d);
  CHECK(md.find("### plumb diff `aaaa` → `bbbb`") != std::string::npos);
  CHECK(md.find("| ~ | `nvidia.driver` | `550.90.07` | `560.35.03` | reboot | "
                "`stacks/h100.yaml:2:19` |") != std::string::npos);
  CHECK(DesiredDiffToJson(d)["nodes"][0]["changes"][0]["after"] == "560.35.03");
}

TEST_CASE("desired diff: identical nodes collapse; nothing changed says so") {
  testing::ReportWorld w;
  plans::DesiredByNode after = w.desired;
  for (auto& [n, nd] : after) nd.desired.Mut()["kernel"] = "6.1.0";
  DesiredDiff d = DiffDesired(w.desired, after);
  std::string t = DesiredDiffToText(d);
  CHECK(t.find("~ gpu[001-004] (4 nodes)  [reboot]\n    ~ kernel: 5.15.0-119-generic -> 6.1.0") != std::string::npos);
  DesiredDiff none = DiffDesired(w.desired, w.desired);
  CHECK(none.nodes.empty());
  CHECK(none.unchanged == 4);
  CHECK(DesiredDiffToText(none).find("No desired-state changes.") != std::string::npos);
}

TEST_CASE("desired diff: markdown cells cannot break the table") {
  testing::ReportWorld w;
  plans::DesiredByNode after = w.desired;
  after["gpu001"].desired.Mut()["kernel"] = "a|b`c";
  std::string md = DesiredDiffToMarkdown(DiffDesired(w.desired, after));
  CHECK(md.find("`a\\|b'c`") != std::string::npos);
}

TEST_CASE("desired diff: each change says the most it can disturb a node, and a summary says who") {
  testing::ReportWorld w;
  plans::DesiredByNode after = w.desired;
  after["gpu001"].desired.Mut()["sysctl"]["vm.swappiness"] = 1;          // live
  after["gpu002"].desired.Mut()["packages"] = {{"dcgm", "1:3.3.7"}};      // drain
  after["gpu003"].desired.Mut()["nvidia"]["driver"] = "560.35.03";        // reboot
  after["gpu004"].desired.Mut()["firmware"] = {{"BMC", "25.01"}};         // re-flash
  DesiredDiff d = DiffDesired(w.desired, after);
  REQUIRE(d.nodes.size() == 4);
  CHECK(d.nodes[0].disruption == modules::Disruption::kNone);
  CHECK(d.nodes[1].disruption == modules::Disruption::kDrain);
  CHECK(d.nodes[2].disruption == modules::Disruption::kReboot);
  CHECK(d.nodes[3].disruption == modules::Disruption::kFirmwareFlash);
  const std::string t = DesiredDiffToText(d);
  CHECK(t.find("Disruption (the most each change can take") != std::string::npos);
  CHECK(t.find("  re-flash + reboot  gpu004\n  drain + reboot     gpu003\n  drain              "
               "gpu002\n  live (no drain)    gpu001\n") != std::string::npos);
  const std::string md = DesiredDiffToMarkdown(d);
  CHECK(md.find("| drain + reboot | `gpu003` |") != std::string::npos);
  CHECK(DesiredDiffToJson(d)["nodes"][3]["disruption"] == "firmware-flash");
  // The table behind it, per the README's module table.
  using plans::KeyDisruption;
  CHECK(KeyDisruption("/kernel") == modules::Disruption::kReboot);
  CHECK(KeyDisruption("/nvidia/persistence_mode") == modules::Disruption::kNone);
  CHECK(KeyDisruption("/nvidia/fabricmanager") == modules::Disruption::kDrain);
  CHECK(KeyDisruption("/nvidia/cuda") == modules::Disruption::kDrain);
  CHECK(KeyDisruption("/services/nvidia-dcgm/active") == modules::Disruption::kServiceRestart);
  CHECK(KeyDisruption("/services/nvidia-dcgm/enabled") == modules::Disruption::kNone);
  CHECK(KeyDisruption("/bios/SriovGlobalEnable") == modules::Disruption::kReboot);
  CHECK(KeyDisruption("/firmware_images/BMC") == modules::Disruption::kNone);
  CHECK(KeyDisruption("/nosuchmodule/x") == modules::Disruption::kNone);
}
