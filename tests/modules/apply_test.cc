// Apply: the exact commands each action runs (FakeShell), errors with stderr tails, and the
// persistence commands run for real by sh against a scratch directory.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fakes/fake_shell.h"
#include "modules/fixtures.h"
#include "modules/kernel/kernel.h"
#include "modules/kernel_modules/kernel_modules.h"
#include "modules/marker/marker.h"
#include "modules/registry.h"
#include "modules/sysctl/sysctl.h"

using nlohmann::json;
using namespace plumb::modules;
using plumb::testing::FakeShell;
using plumb::testing::ReadFixture;

namespace {

// Every apt install first finishes an interrupted dpkg run, if there is one.
constexpr const char* kApt =
    "if [ -n \"$(dpkg --audit 2>/dev/null)\" ]; then DEBIAN_FRONTEND=noninteractive dpkg "
    "--configure -a || exit 1; fi; "
    "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --allow-downgrades "
    "-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold -o DPkg::Lock::Timeout=300";

Action Act(const char* module, const json& desired, const json& facts, size_t index = 0) {
  auto actions = FindModule(module)->Diff(desired, facts);
  REQUIRE(actions.size() > index);
  // Through the plan file and back, as apply will see it.
  auto back = Action::FromJson(actions[index].ToJson());
  REQUIRE(back.ok());
  return *back;
}

struct ApplyNode {
  FakeShell shell;
  NodeContext ctx;
  ApplyNode() { ctx.shell = &shell; }
};

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `command` with sh after pointing its absolute paths at `dir`.
int RunInDir(std::string command, const std::string& from, const std::filesystem::path& dir) {
  for (size_t at; (at = command.find(from)) != std::string::npos;) command.replace(at, from.size(), dir.string());
  return std::system(("sh -c " + plumb::transport::ShellQuote(command)).c_str());
}

}  // namespace

TEST_CASE("apply packages: exact apt pin, held package kept held") {
  ApplyNode n;
  Action a = Act("packages", {{"packages", {{"datacenter-gpu-manager", "1:3.3.7"}}}},
                 {{"manager", "dpkg"}, {"packages", {{"datacenter-gpu-manager", {{"version", "1:3.3.6"}, {"held", true}}}}}});
  std::string install = std::string(kApt) + " --allow-change-held-packages 'datacenter-gpu-manager=1:3.3.7'";
  n.shell.On(install);
  n.shell.On("apt-mark hold 'datacenter-gpu-manager'");
  CHECK(FindModule("packages")->Apply(n.ctx, a).ok());
  CHECK(n.shell.commands_run == std::vector<std::string>{install, "apt-mark hold 'datacenter-gpu-manager'"});
}

TEST_CASE("apply packages: dnf name-version on rpm nodes") {
  ApplyNode n;
  Action a = Act("packages", {{"packages", {{"nvidia-container-toolkit", "1.16.2-1"}}}},
                 {{"manager", "rpm"}, {"packages", json::object()}});
  // installed with the versionlock plugin off, then the lock moved to the pin: versionlock holds
  // it as apt-mark hold does on deb
  const std::vector<std::string> want = {
      "dnf install -y --allowerasing --disableplugin=versionlock 'nvidia-container-toolkit-1.16.2-1'",
      "dnf versionlock delete 'nvidia-container-toolkit'",
      "dnf versionlock add 'nvidia-container-toolkit-1.16.2-1'"};
  for (const auto& c : want) n.shell.On(c);
  CHECK(FindModule("packages")->Apply(n.ctx, a).ok());
  CHECK(n.shell.unexpected.empty());
  CHECK(n.shell.commands_run == want);
  CHECK(a.params["commands"] == json(want));   // the plan shows what apply runs
}

TEST_CASE("apply packages: a failed dnf install leaves the old version's lock in place") {
  ApplyNode n;
  Action a = Act("packages", {{"packages", {{"nvidia-container-toolkit", "1.16.2-1"}}}},
                 {{"manager", "rpm"}, {"packages", json::object()}});
  n.shell.On("dnf install -y --allowerasing --disableplugin=versionlock 'nvidia-container-toolkit-1.16.2-1'",
             1, "", "Error: Failed to download metadata for repo 'cuda-rhel9-x86_64'\n");
  auto st = FindModule("packages")->Apply(n.ctx, a);
  REQUIRE_FALSE(st.ok());
  CHECK(n.shell.commands_run.size() == 1);   // no `versionlock delete`: the old pin stays held
}

TEST_CASE("apply packages: a failed apt-get is an error carrying its stderr tail") {
  ApplyNode n;
  Action a = Act("packages", {{"packages", {{"jq", "1.6-2.1ubuntu3"}}}}, {{"manager", "dpkg"}, {"packages", json::object()}});
  n.shell.On(std::string(kApt) + " 'jq=1.6-2.1ubuntu3'", 100, "",
             "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)\n"
             "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?\n");
  auto st = FindModule("packages")->Apply(n.ctx, a);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == "apply.packages");
  CHECK(st.error().message.find("exited 100") != std::string::npos);
  CHECK(st.error().message.find("Unable to acquire the dpkg frontend lock") != std::string::npos);
}

TEST_CASE("apply packages: hostile names and versions stay one quoted word") {
  ApplyNode n;
  Action a = Act("packages", {{"packages", {{"x'$(reboot)'", "1;reboot"}}}}, {{"manager", "dpkg"}, {"packages", json::object()}});
  std::string install = std::string(kApt) + " 'x'\\''$(reboot)'\\''=1;reboot'";
  n.shell.On(install);
  CHECK(FindModule("packages")->Apply(n.ctx, a).ok());
  CHECK(n.shell.commands_run == std::vector<std::string>{install});
}

TEST_CASE("apply nvidia driver: apt versions resolved with madison, then one pinned install") {
  ApplyNode n;
  Action a = Act("nvidia_driver", {{"nvidia", {{"driver", "550.90.07"}}}},
                 {{"manager", "dpkg"}, {"loaded_version", "535.161.08"}, {"installed_version", "535.161.08"}});
  n.shell.On("apt-cache madison 'cuda-drivers-550'", 0, ReadFixture("packages/apt-cache-madison-cuda-drivers-550.txt"));
  n.shell.On("apt-cache madison 'nvidia-driver-550'", 0, ReadFixture("packages/apt-cache-madison-nvidia-driver-550.txt"));
  std::string install = std::string(kApt) + " 'cuda-drivers-550=550.90.07-1' 'nvidia-driver-550=550.90.07-0ubuntu1'";
  n.shell.On(install);
  CHECK(FindModule("nvidia_driver")->Apply(n.ctx, a).ok());
  CHECK(n.shell.commands_run ==
        std::vector<std::string>{"apt-cache madison 'cuda-drivers-550'", "apt-cache madison 'nvidia-driver-550'", install});
}

TEST_CASE("apply nvidia driver: a version the repo lacks stops before installing anything") {
  ApplyNode n;
  Action a = Act("nvidia_driver", {{"nvidia", {{"driver", "550.100.01"}}}}, {{"manager", "dpkg"}});
  n.shell.On("apt-cache madison 'cuda-drivers-550'", 0, ReadFixture("packages/apt-cache-madison-cuda-drivers-550.txt"));
  auto st = FindModule("nvidia_driver")->Apply(n.ctx, a);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == "apply.resolve");
  CHECK(n.shell.commands_run.size() == 1);
}

TEST_CASE("apply nvidia driver: dnf, fabric manager, persistence mode, pending reboot") {
  ApplyNode n;
  json desired = {{"nvidia", {{"driver", "550.90.07"}, {"fabricmanager", "550.90.07"}, {"persistence_mode", true}}}};
  json facts = {{"manager", "rpm"}, {"loaded_version", nullptr}, {"persistence_mode", false}};
  auto actions = FindModule("nvidia_driver")->Diff(desired, facts);
  REQUIRE(actions.size() == 3);
  // the driver: its branch's module stream (reset first: dnf will not switch an enabled one),
  // then the exact version inside it, held by versionlock
  const std::vector<std::string> driver = {
      "dnf module reset -y 'nvidia-driver'", "dnf module enable -y 'nvidia-driver:550-dkms'",
      "dnf install -y --allowerasing --disableplugin=versionlock 'nvidia-driver-550.90.07' 'cuda-drivers-550.90.07'",
      "dnf versionlock delete 'nvidia-driver' 'cuda-drivers'",
      "dnf versionlock add 'nvidia-driver-550.90.07' 'cuda-drivers-550.90.07'"};
  const std::vector<std::string> fm = {"dnf install -y --allowerasing --disableplugin=versionlock 'nvidia-fabric-manager-550.90.07'",
                                       "dnf versionlock delete 'nvidia-fabric-manager'",
                                       "dnf versionlock add 'nvidia-fabric-manager-550.90.07'"};
  for (const auto& c : driver) n.shell.On(c);
  for (const auto& c : fm) n.shell.On(c);
  n.shell.On("nvidia-smi -pm 1");
  for (const auto& a : actions) CHECK(FindModule("nvidia_driver")->Apply(n.ctx, a).ok());
  std::vector<std::string> all = driver;
  all.insert(all.end(), fm.begin(), fm.end());
  all.push_back("nvidia-smi -pm 1");
  CHECK(n.shell.commands_run == all);
  CHECK(n.shell.unexpected.empty());
  CHECK(actions[0].params["commands"] == json(driver));
  // Installed but not loaded: the action is the reboot alone, which the engine does.
  ApplyNode r;
  Action reboot = Act("nvidia_driver", {{"nvidia", {{"driver", "550.90.07"}}}},
                      {{"loaded_version", "535.161.08"}, {"installed_version", "550.90.07"}});
  CHECK(FindModule("nvidia_driver")->Apply(r.ctx, reboot).ok());
  CHECK(r.shell.commands_run.empty());
}

TEST_CASE("apply cuda, nccl, ofed, kernel: the package map's pins") {
  ApplyNode n;
  n.shell.On(std::string(kApt) + " 'cuda-toolkit-12-4=12.4.1-1'");
  n.shell.On(std::string(kApt) + " 'libnccl2=2.21.5-1+cuda12.4' 'libnccl-dev=2.21.5-1+cuda12.4'");
  n.shell.On("apt-cache madison 'mlnx-ofed-all'", 0,
             " mlnx-ofed-all | 24.07-0.6.1.0 | file:/opt/mlnx_ofed/DEBS ./ Packages\n");
  n.shell.On(std::string(kApt) + " 'mlnx-ofed-all=24.07-0.6.1.0'");
  n.shell.On(std::string(kApt) + " 'linux-image-5.15.0-119-generic' 'linux-headers-5.15.0-119-generic'");
  // The pin's GRUB entry: read from grub.cfg after update-grub, saved, read back.
  const std::string menu =
      "   set default=\"${saved_entry}\"\nmenuentry 'Ubuntu' $menuentry_id_option 'gnulinux-simple-u' {\n"
      "\tlinux /boot/vmlinuz-5.15.0-119-generic ro\n}\n---\n";
  n.shell.On(kernel::KernelDefaultCommands("5.15.0-119-generic", "dpkg").at(0));
  n.shell.On("update-grub");
  n.shell.OnEach(std::string(kernel::kGrubReadCommand), {menu, menu + "saved_entry=gnulinux-simple-u\n"});
  n.shell.On("grub-set-default 'gnulinux-simple-u'");
  json d = {{"kernel", "5.15.0-119-generic"}, {"ofed", "24.07-0.6.1.0"},
            {"nvidia", {{"cuda", "12.4.1"}, {"nccl", "2.21.5-1+cuda12.4"}}}};
  json f = {{"manager", "dpkg"}};
  for (std::string m : {"cuda", "nccl", "ofed", "kernel"}) {
    CAPTURE(m);
    CHECK(FindModule(m)->Apply(n.ctx, Act(m.c_str(), d, f)).ok());
  }
  CHECK(n.shell.unexpected.empty());
  ApplyNode r;
  const std::vector<std::string> rpm = {
      "dnf install -y --allowerasing --disableplugin=versionlock 'kernel-5.14.0-427.13.1.el9_4' 'kernel-devel-5.14.0-427.13.1.el9_4'",
      "dnf versionlock delete 'kernel' 'kernel-devel'",
      "dnf versionlock add 'kernel-5.14.0-427.13.1.el9_4' 'kernel-devel-5.14.0-427.13.1.el9_4'",
      "grubby --set-default '/boot/vmlinuz-5.14.0-427.13.1.el9_4.x86_64'"};
  for (const auto& c : rpm) r.shell.On(c);
  CHECK(FindModule("kernel")->Apply(r.ctx, Act("kernel", {{"kernel", "5.14.0-427.13.1.el9_4.x86_64"}}, {{"manager", "rpm"}})).ok());
  CHECK(r.shell.unexpected.empty());
  CHECK(r.shell.commands_run == rpm);
}

TEST_CASE("apply sysctl: set now, persist atomically, keep other lines") {
  ApplyNode n;
  Action a = Act("sysctl", {{"sysctl", {{"net.core.rmem_max", 268435456}}}}, {{"values", {{"net.core.rmem_max", "212992"}}}});
  std::string persist = sysctl::PersistCommand("net.core.rmem_max", "268435456");
  n.shell.On("sysctl -w 'net.core.rmem_max=268435456'");
  n.shell.On(persist);
  CHECK(FindModule("sysctl")->Apply(n.ctx, a).ok());
  CHECK(n.shell.commands_run == std::vector<std::string>{"sysctl -w 'net.core.rmem_max=268435456'", persist});

  auto dir = std::filesystem::temp_directory_path() / ("plumb-sysctl-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "90-plumb.conf") << "vm.swappiness = 10\nnet.core.rmem_max = 1\nnet.core.rmem_max_x = 5\n"; }
  REQUIRE(RunInDir(persist, "/etc/sysctl.d", dir) == 0);
  CHECK(Slurp(dir / "90-plumb.conf") == "vm.swappiness = 10\nnet.core.rmem_max_x = 5\nnet.core.rmem_max = 268435456\n");
  REQUIRE(RunInDir(persist, "/etc/sysctl.d", dir) == 0);   // idempotent
  CHECK(Slurp(dir / "90-plumb.conf") == "vm.swappiness = 10\nnet.core.rmem_max_x = 5\nnet.core.rmem_max = 268435456\n");
  CHECK_FALSE(std::filesystem::exists(dir / ".90-plumb.conf.tmp"));
  std::filesystem::remove_all(dir);

  Action bad = a;
  bad.params["sysctl"] = "-p /tmp/evil";
  ApplyNode m;
  CHECK_FALSE(FindModule("sysctl")->Apply(m.ctx, bad).ok());
  CHECK(m.shell.commands_run.empty());
}

TEST_CASE("apply kernel module params: options line persisted atomically") {
  ApplyNode n;
  Action a = Act("kernel_modules", {{"kernel_modules", {{"nvidia", {{"NVreg_EnableStreamMemOPs", "1"}}}}}},
                 {{"modules", {{"nvidia", {{"NVreg_EnableStreamMemOPs", "0"}}}}}});
  std::string persist = kernel_modules::PersistCommand("nvidia", "NVreg_EnableStreamMemOPs", "1");
  n.shell.On(persist);
  CHECK(FindModule("kernel_modules")->Apply(n.ctx, a).ok());
  CHECK(n.shell.commands_run == std::vector<std::string>{persist});

  auto dir = std::filesystem::temp_directory_path() / ("plumb-modprobe-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "plumb.conf") << "options nvidia NVreg_EnableStreamMemOPs=0\noptions nvidia NVreg_X=2\n"; }
  REQUIRE(RunInDir(persist, "/etc/modprobe.d", dir) == 0);
  CHECK(Slurp(dir / "plumb.conf") == "options nvidia NVreg_X=2\noptions nvidia NVreg_EnableStreamMemOPs=1\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("apply services: systemctl verbs on the unit") {
  ApplyNode n;
  json desired = {{"services", {{"nvidia-fabricmanager", {{"enabled", true}, {"active", true}}}}}};
  auto actions = FindModule("services")->Diff(desired, {{"units", {{"nvidia-fabricmanager.service", {{"enabled", "disabled"}, {"active", "inactive"}}}}}});
  REQUIRE(actions.size() == 2);
  n.shell.On("systemctl enable 'nvidia-fabricmanager.service'");
  n.shell.On("systemctl start 'nvidia-fabricmanager.service'", 1, "",
             "Job for nvidia-fabricmanager.service failed because the control process exited with error code.\n");
  CHECK(FindModule("services")->Apply(n.ctx, actions[0]).ok());
  auto st = FindModule("services")->Apply(n.ctx, actions[1]);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message.find("control process exited") != std::string::npos);
}

TEST_CASE("apply infiniband: reports the manual fix, runs nothing") {
  ApplyNode n;
  Action a = Act("infiniband", {{"fabric", {{"infiniband", {{"state", "ACTIVE"}}}}}},
                 {{"ports", {{{"ca", "mlx5_1"}, {"port", 1}, {"state", "Down"}, {"link_layer", "InfiniBand"}}}}});
  auto st = FindModule("infiniband")->Apply(n.ctx, a);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == "apply.manual");
  CHECK(st.error().message.find("mlx5_1 port 1") != std::string::npos);
  CHECK(n.shell.commands_run.empty());
}

TEST_CASE("apply marker: written atomically, read back by the parser") {
  ApplyNode n;
  Action a = marker::WriteAction("8f14e45fceea167a5a36dedd4bea2543c0ab2e41", "r-1", "2026-11-29T23:41:07Z");
  std::string cmd =
      "mkdir -p /var/lib/plumb && printf '%s\\n' "
      "'{\"commit\":\"8f14e45fceea167a5a36dedd4bea2543c0ab2e41\",\"run\":\"r-1\",\"time\":\"2026-11-29T23:41:07Z\"}' "
      "> /var/lib/plumb/.marker.json.tmp && mv -f /var/lib/plumb/.marker.json.tmp /var/lib/plumb/marker.json";
  n.shell.On(cmd);
  CHECK(FindModule("marker")->Apply(n.ctx, a).ok());
  CHECK(n.shell.commands_run == std::vector<std::string>{cmd});

  auto dir = std::filesystem::temp_directory_path() / ("plumb-marker-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  REQUIRE(RunInDir(cmd, "/var/lib/plumb", dir) == 0);
  auto facts = FindModule("marker")->ParseProbe(FrameParts({{"marker", 0, Slurp(dir / "marker.json")}}), 0);
  REQUIRE(facts.ok());
  CHECK((*facts)["run"] == "r-1");
  std::filesystem::remove_all(dir);

  Action bad = marker::WriteAction("not-a-sha", "r-1", "t");
  CHECK_FALSE(FindModule("marker")->Apply(n.ctx, bad).ok());
}

TEST_CASE("apply: no shell, unknown action") {
  NodeContext ctx;
  Action a = Act("sysctl", {{"sysctl", {{"vm.swappiness", 10}}}}, {{"values", json::object()}});
  auto st = FindModule("sysctl")->Apply(ctx, a);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == "apply.no-shell");
  a.id = "sysctl.unknown";
  a.params = json::object();
  ApplyNode n;
  CHECK(FindModule("sysctl")->Apply(n.ctx, a).error().code == "apply.unsupported");
}

TEST_CASE("an install cut short is not a finished one: every package of the pin is checked") {
  // The driver pin installs cuda-drivers-550 and nvidia-driver-550. Killed midway: the first
  // is in, the second only unpacked (so not listed as installed), and the kernel module on
  // disk already says 550. The diff still asks for the install, naming what is missing.
  json desired = {{"nvidia", {{"driver", "550.90.07"}}}};
  json facts = {{"manager", "dpkg"},
                {"loaded_version", "535.161.08"},
                {"installed_version", "550.90.07"},
                {"packages", {{"cuda-drivers-550", {{"version", "550.90.07-1"}}},
                              {"nvidia-driver-535", {{"version", "535.161.08-0ubuntu1"}}}}}};
  auto actions = FindModule("nvidia_driver")->Diff(desired, facts);
  REQUIRE(actions.size() == 1);
  CHECK(actions[0].id == "nvidia_driver.install");
  CHECK(actions[0].summary.find("nvidia-driver-550 is not (fully) installed") != std::string::npos);
  // Loaded and both packages in: in sync.
  facts["loaded_version"] = "550.90.07";
  facts["packages"]["nvidia-driver-550"] = {{"version", "550.90.07-0ubuntu1"}};
  CHECK(FindModule("nvidia_driver")->Diff(desired, facts).empty());
  // Loaded 550 but one package at another version: not in sync.
  facts["packages"]["nvidia-driver-550"] = {{"version", "550.54.15-0ubuntu1"}};
  auto again = FindModule("nvidia_driver")->Diff(desired, facts);
  REQUIRE(again.size() == 1);
  CHECK(again[0].summary.find("nvidia-driver-550 is at 550.54.15-0ubuntu1, not 550.90.07") !=
        std::string::npos);
  // A snapshot from before the packages were probed: not checked (no invented drift).
  facts.erase("packages");
  CHECK(FindModule("nvidia_driver")->Diff(desired, facts).empty());
}

TEST_CASE("nccl: both packages of the pin, not only the library the version is read from") {
  json desired = {{"nvidia", {{"nccl", "2.21.5-1+cuda12.4"}}}};
  json facts = {{"manager", "dpkg"},
                {"version", "2.21.5-1+cuda12.4"},
                {"packages", {{"libnccl2", {{"version", "2.21.5-1+cuda12.4"}, {"held", false}}},
                              {"libnccl-dev", {{"version", "2.19.3-1+cuda12.2"}, {"held", false}}}}}};
  auto actions = FindModule("nccl")->Diff(desired, facts);
  REQUIRE(actions.size() == 1);
  CHECK(actions[0].summary.find("libnccl-dev is at 2.19.3-1+cuda12.2") != std::string::npos);
}
