// Diffs as tables: desired state x facts -> the exact actions (pure functions). Actions come in
// desired-key order (JSON objects iterate sorted).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "modules/registry.h"

using nlohmann::json;
using namespace plumb::modules;

namespace {

struct Want {
  std::string id, key, pointer, disruption, summary;
  json before, after;
};

struct DiffCase {
  std::string title, module;
  json desired, facts;
  std::vector<Want> actions;
};

json Driver(json loaded, json installed, json pm = true, json fm = "550.90.07") {
  return {{"manager", "dpkg"}, {"loaded_version", loaded}, {"installed_version", installed},
          {"persistence_mode", pm}, {"fabricmanager", {{"version", fm}}}};
}

std::vector<DiffCase> DiffCases() {
  json stack = json::parse(R"({
    "kernel": "5.15.0-119-generic",
    "nvidia": {"driver": "550.90.07", "cuda": "12.4.1", "nccl": "2.21.5-1+cuda12.4",
               "fabricmanager": "550.90.07", "persistence_mode": true},
    "ofed": "24.07-0.6.1.0",
    "packages": {"datacenter-gpu-manager": "1:3.3.7", "nvidia-container-toolkit": "1.16.2-1"},
    "sysctl": {"net.core.rmem_max": 268435456, "vm.swappiness": 10, "net.ipv4.tcp_rmem": "4096 87380 134217728"},
    "services": {"nvidia-fabricmanager": {"enabled": true, "active": true}, "dcgm": {"enabled": false}},
    "kernel_modules": {"nvidia": {"NVreg_EnableStreamMemOPs": "1"}, "nvme_core": {"multipath": "1"}},
    "fabric": {"infiniband": {"state": "ACTIVE", "rate_gbps": 400, "mtu": 4096}}
  })");
  return {
      {"kernel in sync", "kernel", stack, {{"release", "5.15.0-119-generic"}}, {}},
      {"kernel upgrade", "kernel", stack, {{"release", "5.15.0-105-generic"}, {"manager", "dpkg"}},
       {{"kernel.install", "kernel", "/kernel", "reboot", "install kernel 5.15.0-119-generic and reboot (running 5.15.0-105-generic)",
         "5.15.0-105-generic", "5.15.0-119-generic"}}},
      {"nothing pinned", "kernel", json::object(), {{"release", "x"}}, {}},
      {"driver in sync", "nvidia_driver", stack, Driver("550.90.07", "550.90.07"), {}},
      {"driver upgrade", "nvidia_driver", stack, Driver("535.161.08", "535.161.08"),
       {{"nvidia_driver.install", "nvidia.driver", "/nvidia/driver", "reboot", "install 550.90.07 (have 535.161.08)",
         "535.161.08", "550.90.07"}}},
      {"driver installed, reboot pending", "nvidia_driver", stack, Driver("535.161.08", "550.90.07"),
       {{"nvidia_driver.reboot", "nvidia.driver", "/nvidia/driver", "reboot", "reboot to load 550.90.07", "535.161.08", "550.90.07"}}},
      {"no driver at all", "nvidia_driver", stack, Driver(nullptr, nullptr, nullptr, nullptr),
       {{"nvidia_driver.install", "nvidia.driver", "/nvidia/driver", "reboot", "install 550.90.07 (have none)", nullptr, "550.90.07"},
        {"nvidia_driver.fabricmanager", "nvidia.fabricmanager", "/nvidia/fabricmanager", "drain",
         "install fabric manager 550.90.07 (have none)", nullptr, "550.90.07"},
        {"nvidia_driver.persistence_mode", "nvidia.persistence_mode", "/nvidia/persistence_mode", "none",
         "enable persistence mode (now unknown)", nullptr, true}}},
      {"persistence off", "nvidia_driver", stack, Driver("550.90.07", "550.90.07", false),
       {{"nvidia_driver.persistence_mode", "nvidia.persistence_mode", "/nvidia/persistence_mode", "none",
         "enable persistence mode (now disabled)", false, true}}},
      {"cuda in sync", "cuda", stack, {{"version", "12.4.1"}}, {}},
      {"cuda minor pin matches patch", "cuda", {{"nvidia", {{"cuda", "12.4"}}}}, {{"version", "12.4.1"}}, {}},
      {"cuda upgrade", "cuda", stack, {{"version", "12.2.2"}, {"manager", "dpkg"}},
       {{"cuda.install", "nvidia.cuda", "/nvidia/cuda", "drain", "install CUDA 12.4.1 (have 12.2.2)", "12.2.2", "12.4.1"}}},
      {"cuda 12.4.10 is not 12.4.1", "cuda", stack, {{"version", "12.4.10"}},
       {{"cuda.install", "nvidia.cuda", "/nvidia/cuda", "drain", "install CUDA 12.4.1 (have 12.4.10)", "12.4.10", "12.4.1"}}},
      {"nccl in sync", "nccl", stack, {{"version", "2.21.5-1+cuda12.4"}, {"manager", "dpkg"}}, {}},
      {"nccl missing", "nccl", stack, {{"version", nullptr}, {"manager", "dpkg"}},
       {{"nccl.install", "nvidia.nccl", "/nvidia/nccl", "drain", "install NCCL 2.21.5-1+cuda12.4 (have none)", nullptr,
         "2.21.5-1+cuda12.4"}}},
      {"doca ofed matches 4-part pin", "ofed", stack, {{"version", "24.07-0.6.1"}}, {}},
      {"ofed upgrade", "ofed", stack, {{"version", "23.10-1.1.9.0"}},
       {{"ofed.install", "ofed", "/ofed", "reboot", "install OFED 24.07-0.6.1.0 and reboot (have 23.10-1.1.9.0)",
         "23.10-1.1.9.0", "24.07-0.6.1.0"}}},
      {"packages: epoch matters, missing one installs", "packages", stack,
       {{"manager", "dpkg"}, {"packages", {{"datacenter-gpu-manager", {{"version", "1:3.3.7"}, {"held", false}}}}}},
       {{"packages.nvidia-container-toolkit", "packages.nvidia-container-toolkit", "/packages/nvidia-container-toolkit",
         "drain", "install nvidia-container-toolkit 1.16.2-1 (have none)", nullptr, "1.16.2-1"}}},
      {"packages: older dcgm", "packages", {{"packages", {{"datacenter-gpu-manager", "1:3.3.7"}}}},
       {{"manager", "dpkg"}, {"packages", {{"datacenter-gpu-manager", {{"version", "1:3.3.6"}, {"held", true}}}}}},
       {{"packages.datacenter-gpu-manager", "packages.datacenter-gpu-manager", "/packages/datacenter-gpu-manager", "drain",
         "install datacenter-gpu-manager 1:3.3.7 (have 1:3.3.6)", "1:3.3.6", "1:3.3.7"}}},
      {"packages: a 'held' that is not a boolean is not held (a hand-edited snapshot)", "packages",
       {{"packages", {{"datacenter-gpu-manager", "1:3.3.7"}}}},
       {{"manager", "dpkg"}, {"packages", {{"datacenter-gpu-manager", {{"version", "1:3.3.6"}, {"held", "yes"}}}}}},
       {{"packages.datacenter-gpu-manager", "packages.datacenter-gpu-manager", "/packages/datacenter-gpu-manager", "drain",
         "install datacenter-gpu-manager 1:3.3.7 (have 1:3.3.6)", "1:3.3.6", "1:3.3.7"}}},
      {"packages: rpm release-less pin", "packages", {{"packages", {{"nvidia-container-toolkit", "1.16.2"}}}},
       {{"manager", "rpm"}, {"packages", {{"nvidia-container-toolkit", {{"version", "1.16.2-1"}, {"held", false}}}}}}, {}},
      {"packages: one of several rpm versions", "packages", {{"packages", {{"kernel", "5.14.0-362.24.1.el9_3"}}}},
       {{"manager", "rpm"}, {"packages", {{"kernel", {{"version", "5.14.0-427.13.1.el9_4"}, {"held", false},
                                                      {"versions", {"5.14.0-362.24.1.el9_3", "5.14.0-427.13.1.el9_4"}}}}}}},
       {}},
      {"sysctl: ints, tabs vs spaces", "sysctl", stack,
       {{"values", {{"net.core.rmem_max", "212992"}, {"vm.swappiness", "10"}, {"net.ipv4.tcp_rmem", "4096\t87380\t134217728"}}}},
       {{"sysctl.net.core.rmem_max", "sysctl.net.core.rmem_max", "/sysctl/net.core.rmem_max", "none",
         "set net.core.rmem_max = 268435456 (have 212992)", "212992", "268435456"}}},
      {"sysctl: unknown key", "sysctl", {{"sysctl", {{"net.core.nope", 1}}}}, {{"values", json::object()}},
       {{"sysctl.net.core.nope", "sysctl.net.core.nope", "/sysctl/net.core.nope", "none",
         "set net.core.nope = 1 (have no such key)", nullptr, "1"}}},
      {"services", "services", stack,
       {{"units", {{"nvidia-fabricmanager.service", {{"enabled", "enabled"}, {"active", "failed"}}},
                   {"dcgm.service", {{"enabled", "enabled"}, {"active", "active"}}}}}},
       {{"services.dcgm.enabled", "services.dcgm.enabled", "/services/dcgm/enabled", "none",
         "disable dcgm.service (unit file enabled)", "enabled", false},
        {"services.nvidia-fabricmanager.active", "services.nvidia-fabricmanager.active", "/services/nvidia-fabricmanager/active",
         "service-restart", "start nvidia-fabricmanager.service (now failed)", "failed", true}}},
      {"services: absent unit wanted off is in sync", "services", {{"services", {{"foo", {{"enabled", false}, {"active", false}}}}}},
       {{"units", json::object()}}, {}},
      {"kernel module params", "kernel_modules", stack,
       {{"modules", {{"nvidia", {{"NVreg_EnableStreamMemOPs", "0"}}}, {"nvme_core", {{"multipath", "Y"}}}}}},
       {{"kernel_modules.nvidia.NVreg_EnableStreamMemOPs", "kernel_modules.nvidia.NVreg_EnableStreamMemOPs",
         "/kernel_modules/nvidia/NVreg_EnableStreamMemOPs", "reboot", "set nvidia NVreg_EnableStreamMemOPs=1 and reboot (have 0)",
         "0", "1"}}},
      {"infiniband", "infiniband", stack,
       {{"ports", {{{"ca", "mlx5_0"}, {"port", 1}, {"state", "Active"}, {"rate_gbps", 400.0}, {"mtu", 4096}, {"link_layer", "InfiniBand"}},
                   {{"ca", "mlx5_1"}, {"port", 1}, {"state", "Down"}, {"rate_gbps", 10.0}, {"mtu", 4096}, {"link_layer", "InfiniBand"}},
                   {{"ca", "mlx5_2"}, {"port", 1}, {"state", "Active"}, {"rate_gbps", 100.0}, {"mtu", 1024}, {"link_layer", "Ethernet"}}}}},
       {{"infiniband.mlx5_1.1.state", "fabric.infiniband.state", "/fabric/infiniband/state", "drain",
         "mlx5_1 port 1: state Down, want ACTIVE (needs a fabric fix", "Down", "ACTIVE"},
        {"infiniband.mlx5_1.1.rate_gbps", "fabric.infiniband.rate_gbps", "/fabric/infiniband/rate_gbps", "drain",
         "mlx5_1 port 1: rate 10.0 Gb/s, want 400", 10.0, 400}}},
      {"infiniband: no ports", "infiniband", stack, {{"present", false}, {"ports", json::array()}},
       {{"infiniband.ports", "fabric.infiniband", "/fabric/infiniband", "drain", "no InfiniBand port found", nullptr,
         stack["fabric"]["infiniband"]}}},
      // ibstat stopped at a CA it could not read: the ports it did read are judged, and the
      // unread CA is not taken as in sync (issue 12).
      {"infiniband: a CA ibstat could not read", "infiniband", stack,
       {{"ports", {{{"ca", "mlx5_0"}, {"port", 1}, {"state", "Active"}, {"rate_gbps", 400.0}, {"mtu", 4096}, {"link_layer", "InfiniBand"}}}},
        {"unread_cas", {"mlx5_1"}}},
       {{"infiniband.mlx5_1.unread", "fabric.infiniband", "/fabric/infiniband", "drain",
         "mlx5_1: ibstat could not read this CA and stopped there", nullptr, stack["fabric"]["infiniband"]}}},
      {"infiniband: no port read, the first CA unread", "infiniband", stack,
       {{"present", true}, {"ports", json::array()}, {"unread_cas", {"mlx5_0"}}},
       {{"infiniband.mlx5_0.unread", "fabric.infiniband", "/fabric/infiniband", "drain",
         "mlx5_0: ibstat could not read this CA", nullptr, stack["fabric"]["infiniband"]}}},
      {"facts-only modules", "os", stack, {{"id", "ubuntu"}}, {}},
      {"marker has no diff", "marker", stack, {{"present", false}}, {}},
  };
}

}  // namespace

TEST_CASE("diff: desired x facts -> exactly the expected actions") {
  for (const DiffCase& c : DiffCases()) {
    CAPTURE(c.title);
    const Module* m = FindModule(c.module);
    REQUIRE(m);
    auto actions = m->Diff(c.desired, c.facts);
    REQUIRE(actions.size() == c.actions.size());
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action& a = actions[i];
      const Want& w = c.actions[i];
      CAPTURE(a.ToJson().dump());
      CHECK(a.module == c.module);
      CHECK(a.id == w.id);
      CHECK(a.key == w.key);
      CHECK(a.pointer == w.pointer);
      CHECK(std::string(DisruptionName(a.disruption)) == w.disruption);
      // No action disturbs more than its module declares for its key (what `plumb diff` shows).
      CHECK(a.disruption <= m->Info().DisruptionOf(a.pointer));
      CHECK(a.summary.find(w.summary) == 0);
      CHECK(a.before == w.before);
      CHECK(a.after == w.after);
      // Every action survives the plan file round trip.
      auto back = Action::FromJson(a.ToJson());
      REQUIRE(back.ok());
      CHECK(back->ToJson() == a.ToJson());
      // The pointer names the desired value the action is about.
      if (!a.pointer.empty() && a.module != "infiniband")
        CHECK(c.desired.contains(json::json_pointer(a.pointer)));
    }
    CHECK(m->Wants(c.desired) == (c.desired.is_object() && !c.desired.empty() && c.module != "os" && c.module != "marker"));
  }
}

TEST_CASE("diff: applying the actions' `after` to the facts makes the diff empty") {
  // Each module's verify is "re-probe, expect an empty diff": a node that took the action reports
  // the desired value and is in sync.
  json desired = {{"kernel", "5.15.0-119-generic"}, {"sysctl", {{"vm.swappiness", 10}}},
                  {"nvidia", {{"cuda", "12.4.1"}}}};
  CHECK(FindModule("kernel")->Diff(desired, {{"release", "5.15.0-119-generic"}}).empty());
  CHECK(FindModule("sysctl")->Diff(desired, {{"values", {{"vm.swappiness", "10"}}}}).empty());
  CHECK(FindModule("cuda")->Diff(desired, {{"version", "12.4.1"}}).empty());
}
