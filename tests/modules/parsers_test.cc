// Parsers on captured real outputs (tests/data, see SOURCES.md): every fixture, error outputs
// included, through the module's own ParseProbe.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "modules/fixtures.h"
#include "modules/module.h"
#include "modules/registry.h"

using nlohmann::json;
using plumb::testing::MakeParts;
using plumb::testing::PartSpec;

namespace {

constexpr const char* kAbsent = "plumb-absent: tool\n";

struct ParserCase {
  const char* title;
  const char* module;
  std::vector<PartSpec> parts;
  json expect;              // JSON pointer -> expected value (subset check); null = no facts checked
  const char* error = "";   // substring of a module problem's message (the module's error, or a
                            // part error next to the facts that were read); "" = read whole
};

std::vector<ParserCase> ParserCases() {
  PartSpec dpkg{"pm", "dpkg\n"}, rpm{"pm", "rpm\n"};
  return {
      // kernel
      {"uname ubuntu", "kernel", {{"release", "@kernel/uname-r-ubuntu.txt"}, {"boot_id", "@kernel/boot-id.txt"}, dpkg},
       {{"/release", "5.15.0-119-generic"}, {"/boot_id", "3b2f9c1e-7d4a-4e8b-9a55-0c6f1d2e8a47"}, {"/manager", "dpkg"}}},
      {"uname rhel", "kernel", {{"release", "@kernel/uname-r-rhel9.txt"}, rpm},
       {{"/release", "5.14.0-427.13.1.el9_4.x86_64"}, {"/boot_id", nullptr}, {"/manager", "rpm"}}},
      {"uname empty", "kernel", {{"release", "@kernel/empty.txt"}}, nullptr, "uname -r: empty output"},
      {"uname error text", "kernel", {{"release", "@kernel/garbage.txt", 1}}, nullptr, "in line 1"},
      // os
      {"ubuntu", "os", {{"os_release", "@os/os-release-ubuntu2204.txt"}},
       {{"/id", "ubuntu"}, {"/version_id", "22.04"}, {"/family", "debian"}, {"/pretty_name", "Ubuntu 22.04.4 LTS"}}},
      {"rhel", "os", {{"os_release", "@os/os-release-rhel94.txt"}},
       {{"/id", "rhel"}, {"/version_id", "9.4"}, {"/family", "rhel"}, {"/id_like/0", "fedora"}}},
      {"debian", "os", {{"os_release", "@os/os-release-debian12.txt"}}, {{"/id", "debian"}, {"/version_id", "12"}}},
      {"os truncated", "os", {{"os_release", "@os/truncated.txt"}}, nullptr, "unterminated quote in line 2"},
      {"os garbage", "os", {{"os_release", "@os/garbage.txt"}}, nullptr, "in line 1"},
      {"os absent", "os", {{"os_release", kAbsent, 127}}, {{"/id", nullptr}, {"/family", "unknown"}}},
      // nvidia_driver
      {"driver 550 healthy", "nvidia_driver",
       {{"proc_version", "@nvidia_driver/proc-version-550.txt"}, {"smi", "@nvidia_driver/smi-csv-8xh100.txt"},
        {"modinfo", "@nvidia_driver/modinfo-version-550.txt"}, {"fm_version", "@nvidia_driver/fm-version-550.txt"},
        {"fm_service", "@nvidia_driver/fm-service-active.txt"}, dpkg},
       {{"/loaded_version", "550.90.07"}, {"/kernel_module", "proprietary"}, {"/installed_version", "550.90.07"},
        {"/nvml", "ok"}, {"/persistence_mode", true}, {"/gpus/7/bus_id", "00000000:DB:00.0"},
        {"/gpus/0/name", "NVIDIA H100 80GB HBM3"}, {"/fabricmanager/version", "550.90.07"},
        {"/fabricmanager/service/active", "active"}, {"/fabricmanager/service/enabled", "enabled"}}},
      {"open kernel module", "nvidia_driver", {{"proc_version", "@nvidia_driver/proc-version-open-565.txt"}},
       {{"/loaded_version", "565.57.01"}, {"/kernel_module", "open"}, {"/nvml", "absent"}}},
      {"mixed persistence", "nvidia_driver",
       {{"proc_version", "@nvidia_driver/proc-version-535.txt"}, {"smi", "@nvidia_driver/smi-csv-535-mixed-pm.txt"}},
       {{"/loaded_version", "535.161.08"}, {"/persistence_mode", false}, {"/gpus/3/persistence_mode", false}}},
      {"csv with header", "nvidia_driver", {{"smi", "@nvidia_driver/smi-csv-header.txt"}},
       {{"/loaded_version", "535.161.08"}, {"/gpus/1/name", "NVIDIA A100-SXM4-80GB"}, {"/persistence_mode", false}}},
      {"nvml mismatch after install", "nvidia_driver",
       {{"proc_version", "@nvidia_driver/proc-version-535.txt"}, {"smi", "@nvidia_driver/smi-nvml-mismatch.txt", 18},
        {"modinfo", "@nvidia_driver/modinfo-version-550.txt"}},
       {{"/nvml", "version-mismatch"}, {"/nvml_library_version", "550.90"}, {"/loaded_version", "535.161.08"},
        {"/installed_version", "550.90.07"}, {"/gpus", json::array()}}},
      {"no driver", "nvidia_driver",
       {{"proc_version", kAbsent, 127}, {"smi", "@nvidia_driver/smi-no-driver.txt", 9},
        {"modinfo", "@nvidia_driver/modinfo-not-found.txt", 1}, {"fm_version", "@nvidia_driver/fm-absent.txt", 127},
        {"fm_service", "@nvidia_driver/fm-service-not-found.txt"}},
       {{"/nvml", "no-driver"}, {"/loaded_version", nullptr}, {"/installed_version", nullptr},
        {"/fabricmanager/version", nullptr}, {"/fabricmanager/service/load", "not-found"},
        {"/fabricmanager/service/enabled", nullptr}}},
      {"smi killed by timeout", "nvidia_driver", {{"smi", "@nvidia_driver/smi-truncated.txt", 124}},
       {{"/nvml", "timeout"}, {"/gpus", json::array()}}},
      {"smi hung before printing", "nvidia_driver", {{"smi", "", 124}}, {{"/nvml", "timeout"}, {"/gpus", json::array()}}},
      {"smi failed silently", "nvidia_driver", {{"smi", "", 255}}, {{"/nvml", "error"}}},
      {"fm failed", "nvidia_driver", {{"fm_service", "@nvidia_driver/fm-service-failed.txt"}},
       {{"/fabricmanager/service/active", "failed"}}},
      {"smi truncated", "nvidia_driver", {{"smi", "@nvidia_driver/smi-truncated.txt"}}, nullptr, "cut short in line 2"},
      {"smi table instead of csv", "nvidia_driver", {{"smi", "@nvidia_driver/smi-garbage.txt"}}, nullptr,
       "expected 5 CSV fields in line 1"},
      {"proc version garbage", "nvidia_driver", {{"proc_version", "hello\n"}}, nullptr, "expected 'NVRM version:' in line 1"},
      // Another tool's stderr before nvidia-smi's known failure: still that failure, the other
      // line kept as a note (issue 12).
      {"modprobe FATAL before no-driver", "nvidia_driver",
       {{"proc_version", kAbsent, 127}, {"smi", "@nvidia_driver/smi-modprobe-fatal-no-driver.txt", 9},
        {"modinfo", "@nvidia_driver/modinfo-version-550.txt"}},
       {{"/nvml", "no-driver"}, {"/loaded_version", nullptr}, {"/installed_version", "550.90.07"},
        {"/gpus", json::array()},
        {"/smi_notes", json::array({"modprobe: FATAL: Module nvidia not found in directory /lib/modules/5.15.0-119-generic"})}}},
      {"modprobe ERRORs before no-driver", "nvidia_driver",
       {{"smi", "@nvidia_driver/smi-modprobe-errors-no-driver.txt", 9}},
       {{"/nvml", "no-driver"}, {"/smi_notes/3", "modprobe: ERROR: could not insert 'nvidia_550': Function not implemented"}}},
      {"stderr line before the NVML mismatch", "nvidia_driver",
       {{"smi", "modprobe: FATAL: Module nvidia_uvm not found.\nFailed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.90\n", 18}},
       {{"/nvml", "version-mismatch"}, {"/nvml_library_version", "550.90"},
        {"/smi_notes/0", "modprobe: FATAL: Module nvidia_uvm not found."}}},
      // One failing sub-probe costs its own facts only: /proc, modinfo and the fabric manager
      // still say what they said (issue 12).
      {"nvidia-smi garbage keeps the other parts", "nvidia_driver",
       {{"proc_version", "@nvidia_driver/proc-version-550.txt"}, {"smi", "@nvidia_driver/smi-garbage.txt"},
        {"modinfo", "@nvidia_driver/modinfo-version-550.txt"}, {"fm_version", "@nvidia_driver/fm-version-550.txt"},
        {"fm_service", "@nvidia_driver/fm-service-active.txt"}},
       {{"/loaded_version", "550.90.07"}, {"/installed_version", "550.90.07"}, {"/nvml", nullptr},
        {"/gpus", json::array()}, {"/persistence_mode", nullptr}, {"/fabricmanager/version", "550.90.07"},
        {"/fabricmanager/service/active", "active"}, {"/part_errors/0/part", "smi"}},
       "nvidia-smi: expected 5 CSV fields in line 1"},
      {"garbled modinfo and systemctl keep nvidia-smi's GPUs", "nvidia_driver",
       {{"smi", "@nvidia_driver/smi-csv-8xh100.txt"}, {"modinfo", "@kernel/garbage.txt", 1},
        {"fm_service", "@nvidia_driver/smi-garbage.txt"}},
       {{"/loaded_version", "550.90.07"}, {"/gpus/7/bus_id", "00000000:DB:00.0"}, {"/installed_version", nullptr},
        {"/fabricmanager/service", nullptr}, {"/part_errors/0/part", "modinfo"}, {"/part_errors/1/part", "fm_service"}},
       "systemctl show: expected Key=Value in line 1"},
      // The R610 branch: /proc, the CSV query (driver_version is deprecated there, still answered)
      // and modinfo read as before.
      {"driver 610 (R610 branch)", "nvidia_driver",
       {{"proc_version", "@nvidia_driver/proc-version-610.txt"}, {"smi", "@nvidia_driver/smi-csv-610-h200.txt"},
        {"modinfo", "@nvidia_driver/modinfo-version-610.txt"}, dpkg},
       {{"/loaded_version", "610.43.02"}, {"/kernel_module", "proprietary"}, {"/installed_version", "610.43.02"},
        {"/nvml", "ok"}, {"/gpus/0/name", "NVIDIA H200"}, {"/gpus/0/bus_id", "00000000:83:00.0"},
        {"/gpus/0/driver_version", "610.43.02"}, {"/persistence_mode", true}}},
      // cuda
      {"cuda 12.4.1", "cuda",
       {{"version_json", "@cuda/version-json-12.4.1.txt"}, {"toolkits", "@cuda/toolkits.txt"}, dpkg},
       {{"/version", "12.4.1"}, {"/source", "version.json"}, {"/components/cuda_nvcc", "12.4.131"},
        {"/toolkits/1", "/usr/local/cuda-12.4"}}},
      {"cuda 12.2.2", "cuda", {{"version_json", "@cuda/version-json-12.2.2.txt"}}, {{"/version", "12.2.2"}}},
      {"cuda 11.0 txt", "cuda", {{"version_json", kAbsent, 127}, {"version_txt", "@cuda/version-txt-11.0.txt"}},
       {{"/version", "11.0.228"}, {"/source", "version.txt"}}},
      {"no cuda", "cuda", {{"version_json", kAbsent, 127}, {"version_txt", kAbsent, 127}, {"toolkits", ""}},
       {{"/version", nullptr}, {"/toolkits", json::array()}}},
      {"cuda json truncated", "cuda", {{"version_json", "@cuda/version-json-truncated.txt"}}, nullptr, "not a JSON object"},
      {"cuda json without cuda key", "cuda", {{"version_json", "@cuda/version-json-no-cuda-key.txt"}}, nullptr,
       "no \"cuda\""},
      // nccl
      {"nccl dpkg", "nccl", {{"pkgs", "@packages/dpkg-query-h100.txt"}, dpkg},
       {{"/version", "2.21.5-1+cuda12.4"}, {"/packages/libnccl2/held", true}}},
      {"nccl rpm", "nccl", {{"pkgs", "@packages/rpm-qa-rhel9.txt"}, rpm}, {{"/version", "2.21.5-1+cuda12.4"}}},
      {"nccl not installed", "nccl",
       {{"pkgs", "dpkg-query: no packages found matching libnccl2\ndpkg-query: no packages found matching libnccl-dev\n", 1}, dpkg},
       {{"/version", nullptr}}},
      {"nccl rpm not installed", "nccl",
       {{"pkgs", "package libnccl is not installed\npackage libnccl-devel is not installed\n", 2}, rpm},
       {{"/version", nullptr}}},
      // ofed
      {"mlnx ofed 23.10", "ofed", {{"ofed_info", "@ofed/ofed-info-s-mlnx-23.10.txt"}},
       {{"/version", "23.10-1.1.9.0"}, {"/flavor", "mlnx_ofed"}, {"/raw", "MLNX_OFED_LINUX-23.10-1.1.9.0"}}},
      {"doca ofed 24.07", "ofed", {{"ofed_info", "@ofed/ofed-info-s-doca-24.07.txt"}},
       {{"/version", "24.07-0.6.1"}, {"/flavor", "doca"}}},
      {"mlnx ofed 5.8", "ofed", {{"ofed_info", "@ofed/ofed-info-s-mlnx-5.8.txt"}}, {{"/version", "5.8-4.1.5.0"}}},
      {"no ofed", "ofed", {{"ofed_info", "plumb-absent: ofed_info\n", 127}}, {{"/version", nullptr}}},
      {"ofed garbage", "ofed", {{"ofed_info", "@ofed/garbage.txt", 1}}, nullptr, "in line 1"},
      // packages
      {"dpkg list", "packages", {{"list", "@packages/dpkg-query-h100.txt"}, dpkg},
       {{"/manager", "dpkg"}, {"/packages/datacenter-gpu-manager/version", "1:3.3.7"},
        {"/packages/nvidia-driver-550-server/held", true}, {"/packages/adduser/held", false},
        {"/packages/openssh-server/version", "1:8.9p1-3ubuntu0.10"}}},
      {"rpm list", "packages", {{"list", "@packages/rpm-qa-rhel9.txt"}, rpm},
       {{"/manager", "rpm"}, {"/packages/datacenter-gpu-manager/version", "1:3.3.7-1"},
        {"/packages/shadow-utils/version", "2:4.9-8.el9"}, {"/packages/kernel/versions/1", "5.14.0-362.24.1.el9_3"},
        {"/packages/bash/version", "5.1.8-9.el9"}}},
      {"dpkg locked", "packages", {{"list", "@packages/dpkg-query-lock.txt", 2}, dpkg}, nullptr, "dpkg-query failed in line 1"},
      {"rpm db broken", "packages", {{"list", "@packages/rpm-db-broken.txt", 1}, rpm}, nullptr, "rpm failed in line 1"},
      {"dpkg truncated", "packages", {{"list", "@packages/truncated.txt"}, dpkg}, nullptr, "line 2"},
      {"dpkg empty but failed", "packages", {{"list", "@packages/empty.txt", 2}, dpkg}, nullptr, "non-zero exit"},
      {"no package manager", "packages", {{"list", "plumb-absent: dpkg-query\n", 127}, {"pm", "none\n"}},
       {{"/manager", "none"}, {"/packages", json::object()}}},
      // sysctl
      {"sysctl as root", "sysctl", {{"values", "@sysctl/sysctl-a-subset.txt"}},
       {{"/values/net.core.rmem_max", "268435456"}, {"/values/net.ipv4.tcp_rmem", "4096\t87380\t134217728"},
        {"/values/kernel.core_pattern", "|/usr/share/apport/apport -p%p -s%s -c%c -d%d -P%P -u%u -g%g -- %E"},
        {"/unreadable", json::array()}}},
      {"sysctl non-root", "sysctl", {{"values", "@sysctl/sysctl-a-nonroot.txt", 255}},
       {{"/values/vm.swappiness", "60"}, {"/unreadable/0", "fs.protected_fifos"}, {"/unreadable/2", "net.ipv4.tcp_fastopen_key"}}},
      {"sysctl empty value", "sysctl", {{"values", "@sysctl/sysctl-empty-value.txt"}},
       {{"/values/kernel.domainname", ""}, {"/values/kernel.hostname", "gpu002"}}},
      {"sysctl garbage", "sysctl", {{"values", "@sysctl/garbage.txt"}}, nullptr, "expected 'key = value' in line 1"},
      // services
      {"systemd units", "services", {{"unit_files", "@services/list-unit-files.txt"}, {"units", "@services/list-units.txt"}},
       {{"/systemd", true}, {"/units/nvidia-fabricmanager.service/enabled", "enabled"},
        {"/units/nvidia-fabricmanager.service/active", "failed"}, {"/units/dcgm.service/enabled", "disabled"},
        {"/units/dcgm.service/active", "inactive"}, {"/units/unattended-upgrades.service/enabled", "masked"},
        {"/units/ssh.service/sub", "running"}}},
      {"systemd 237 two columns", "services",
       {{"unit_files", "@services/list-unit-files-systemd237.txt"}, {"units", ""}},
       {{"/units/syslog.service/enabled", "enabled"}}},
      {"systemd not running", "services",
       {{"unit_files", "@services/list-unit-files.txt"}, {"units", "@services/not-booted-with-systemd.txt", 1}},
       {{"/systemd", false}, {"/units/ssh.service/enabled", "enabled"}, {"/units/ssh.service/active", nullptr}}},
      {"systemctl garbage", "services", {{"unit_files", "@services/garbage.txt", 1}, {"units", "@services/garbage.txt", 1}},
       nullptr, "in line 1"},
      {"no systemd", "services", {{"unit_files", kAbsent, 127}, {"units", kAbsent, 127}}, {{"/systemd", false}}},
      // kernel_modules
      {"module params", "kernel_modules", {{"params", "@kernel_modules/sys-module-params.txt"}},
       {{"/modules/nvidia/NVreg_EnableStreamMemOPs", "0"}, {"/modules/nvidia/NVreg_RegistryDwords", ""},
        {"/modules/nvme_core/multipath", "Y"}, {"/modules/zfs/zfs_vdev_scheduler", "noop:legacy"}}},
      {"module params garbage", "kernel_modules", {{"params", "@kernel_modules/garbage.txt", 2}}, nullptr, "in line 2"},
      // infiniband
      {"4x NDR", "infiniband", {{"ibstat", "@infiniband/ibstat-4xcx7-ndr.txt"}, {"devinfo", "@infiniband/ibv-devinfo-4xcx7.txt"}},
       {{"/present", true}, {"/ports/3/ca", "mlx5_3"}, {"/ports/0/state", "Active"}, {"/ports/0/rate_gbps", 400.0},
        {"/ports/0/mtu", 4096}, {"/ports/0/firmware", "28.39.2048"}, {"/ports/0/link_layer", "InfiniBand"}}},
      {"mixed down and ethernet", "infiniband",
       {{"ibstat", "@infiniband/ibstat-mixed-down-eth.txt"}, {"devinfo", "@infiniband/ibv-devinfo-mixed.txt"}},
       {{"/ports/1/state", "Down"}, {"/ports/1/physical_state", "Polling"}, {"/ports/2/link_layer", "Ethernet"},
        {"/ports/2/firmware", "22.39.2048"}, {"/ports/3/rate_gbps", 200.0}, {"/ports/3/mtu", 2048}}},
      {"two-port cx3", "infiniband", {{"ibstat", "@infiniband/ibstat-cx3-two-ports.txt"}, {"devinfo", kAbsent, 127}},
       {{"/ports/0/port", 1}, {"/ports/1/port", 2}, {"/ports/1/rate_gbps", 56.0}, {"/ports/1/mtu", nullptr}}},
      {"ibpanic tail", "infiniband", {{"ibstat", "@infiniband/ibstat-ibpanic-tail.txt", 255}},
       {{"/ports/0/ca", "mlx5_7"}, {"/warnings/0", "ibpanic: [1323906] main: stat of IB device 'mlx5_8' failed: No such file or directory"},
        {"/unread_cas", json::array({"mlx5_8"})}, {"/part_errors/0/part", "ibstat"}},
       "ibstat: could not read CA mlx5_8 (exit 255"},
      // Into a pipe, ibstat's stdout is flushed at exit, after the ibpanic (issue 12).
      {"ibpanic first", "infiniband", {{"ibstat", "@infiniband/ibstat-ibpanic-head.txt", 255}},
       {{"/ports/2/ca", "mlx5_2"}, {"/ports/2/state", "Active"}, {"/ports/2/rate_gbps", 400.0},
        {"/unread_cas", json::array({"mlx5_3"})}},
       "ibstat: could not read CA mlx5_3"},
      // ... or, past 4 KiB of stdout, inside a line: the line is stitched back together.
      {"ibpanic inside a line", "infiniband", {{"ibstat", "@infiniband/ibstat-ibpanic-spliced.txt", 255}},
       {{"/ports/11/ca", "mlx5_11"}, {"/ports/11/state", "Active"}, {"/ports/11/physical_state", "LinkUp"},
        {"/ports/11/rate_gbps", 400.0}, {"/ports/11/link_layer", "InfiniBand"}, {"/ports/0/ca", "mlx5_0"},
        {"/unread_cas", json::array({"mlx5_12"})},
        {"/warnings/0", "ibpanic: [1323906] main: stat of IB device 'mlx5_12' failed: No such file or directory"}},
       "ibstat: could not read CA mlx5_12"},
      {"ibstat indented with spaces", "infiniband",
       {{"ibstat", "@infiniband/ibstat-4xcx7-spaces.txt"}, {"devinfo", "@infiniband/ibv-devinfo-4xcx7.txt"}},
       {{"/ports/3/ca", "mlx5_3"}, {"/ports/3/state", "Active"}, {"/ports/3/rate_gbps", 400.0},
        {"/ports/3/firmware", "28.39.2048"}, {"/ports/3/link_layer", "InfiniBand"}, {"/ports/3/mtu", 4096}}},
      {"ibstat, two spaces, no final newline", "infiniband",
       {{"ibstat", "@infiniband/ibstat-4xcx7-2spaces-no-final-newline.txt"}},
       {{"/ports/3/ca", "mlx5_3"}, {"/ports/3/link_layer", "InfiniBand"}, {"/ports/3/ca_type", "MT4129"}}},
      {"ibstat killed by the probe's timeout", "infiniband",
       {{"ibstat", "@infiniband/ibstat-truncated.txt", 124}, {"devinfo", "@infiniband/ibv-devinfo-4xcx7.txt"}},
       {{"/present", true}, {"/ports", json::array()}}, "ibstat: killed (exit 124)"},
      {"garbled ibv_devinfo costs the MTUs only", "infiniband",
       {{"ibstat", "@infiniband/ibstat-4xcx7-ndr.txt"}, {"devinfo", "@infiniband/ibstat-4xcx7-ndr.txt"}},
       {{"/ports/3/state", "Active"}, {"/ports/3/mtu", nullptr}, {"/part_errors/0/part", "devinfo"}},
       "ibv_devinfo"},
      {"ibwarn head", "infiniband", {{"ibstat", "@infiniband/ibstat-ibwarn-head.txt"}},
       {{"/ports/0/state", "Active"}, {"/warnings/1", "ibwarn: [168988] umad_get_ca_device_list: return 1 cas"}}},
      {"no devices", "infiniband", {{"ibstat", "@infiniband/ibstat-no-devices.txt", 255}, {"devinfo", "@infiniband/ibv-devinfo-no-devices.txt", 255}},
       {{"/present", true}, {"/ports", json::array()}}},
      {"no ibstat", "infiniband", {{"ibstat", "plumb-absent: ibstat\n", 127}}, {{"/present", false}}},
      {"ibstat garbage", "infiniband", {{"ibstat", "@nvidia_driver/smi-garbage.txt", 1}}, nullptr,
       "ibstat: expected CA '<name>' in line 1"},
      // marker
      {"marker", "marker", {{"marker", "@marker/marker.json"}},
       {{"/present", true}, {"/commit", "8f14e45fceea167a5a36dedd4bea2543c0ab2e41"}, {"/run", "r-20261129-2300-ab12"}}},
      {"no marker", "marker", {{"marker", "plumb-absent: /var/lib/plumb/marker.json\n", 127}}, {{"/present", false}, {"/commit", nullptr}}},
      {"marker garbage", "marker", {{"marker", "@marker/marker-garbage.txt"}}, nullptr, "not a JSON object"},
      {"marker empty", "marker", {{"marker", "@marker/marker-absent.txt"}}, nullptr, "not a JSON object"},
  };
}

}  // namespace

TEST_CASE("parsers: captured outputs give the documented facts or a located error") {
  for (const ParserCase& c : ParserCases()) {
    std::string title = c.title;
    CAPTURE(title);
    const auto* m = plumb::modules::FindModule(c.module);
    REQUIRE(m != nullptr);
    auto facts = m->ParseProbe(plumb::modules::FrameParts(MakeParts(c.parts)), 0);
    auto problems = plumb::modules::ModuleProblems(facts);
    std::string said = plumb::modules::ModuleProblemText(facts);
    if (*c.error) {
      REQUIRE_MESSAGE(!problems.empty(), "expected a problem with '" << c.error << "'");
      bool found = false;
      for (const auto& d : problems) {
        CHECK(d.code == std::string("probe.") + c.module);
        found = found || d.message.find(c.error) != std::string::npos;
      }
      CHECK_MESSAGE(found, said);
    } else {
      CHECK_MESSAGE(problems.empty(), said);
    }
    if (c.expect.is_null()) continue;
    REQUIRE_MESSAGE(facts.ok(), said);
    for (const auto& item : c.expect.items()) {
      const std::string pointer = item.key();   // not a structured binding: CAPTURE is a lambda
      const json& want = item.value();
      CAPTURE(pointer);
      json::json_pointer p(pointer);
      REQUIRE_MESSAGE(facts->contains(p), facts->dump());
      CHECK((*facts)[p] == want);
    }
  }
}

TEST_CASE("parsers: a garbled section frame is a probe error of that module") {
  const auto* m = plumb::modules::FindModule("kernel");
  auto facts = m->ParseProbe("%part release 0 999\nshort\n", 0);
  REQUIRE_FALSE(facts.ok());
  CHECK(facts.error().code == "probe.kernel");
}
