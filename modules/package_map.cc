#include "modules/package_map.h"

#include <fmt/format.h>

#include "modules/apply_util.h"
#include "modules/parse_util.h"

namespace plumb::modules {

using transport::ShellQuote;

std::string DriverBranch(std::string_view v) {
  size_t dot = v.find('.');
  return std::string(v.substr(0, dot));
}

std::vector<PackagePin> DriverPackages(std::string_view v, std::string_view m) {
  std::string b = DriverBranch(v);
  if (m == "rpm") return {{"nvidia-driver", std::string(v), ""}, {"cuda-drivers", std::string(v), ""}};
  return {{"cuda-drivers-" + b, "", std::string(v)}, {"nvidia-driver-" + b, "", std::string(v)}};
}

std::vector<PackagePin> FabricManagerPackages(std::string_view v, std::string_view m) {
  std::string b = DriverBranch(v);
  if (m == "rpm") return {{"nvidia-fabric-manager", std::string(v), ""}};
  return {{"nvidia-fabricmanager-" + b, "", std::string(v)},
          {"libnvidia-nscq-" + b, "", std::string(v)}};
}

std::vector<PackagePin> CudaPackages(std::string_view v, std::string_view m) {
  // cuda-toolkit-X-Y carries the full X.Y.Z version; NVIDIA's repo revision is always -1.
  auto parts = Split(v, ".");
  std::string name = "cuda-toolkit-" + std::string(parts[0]) +
                     (parts.size() > 1 ? "-" + std::string(parts[1]) : std::string());
  if (m == "rpm") return {{name, std::string(v), ""}};
  return {{name, std::string(v) + "-1", ""}};
}

std::vector<PackagePin> NcclPackages(std::string_view v, std::string_view m) {
  if (m == "rpm") return {{"libnccl", std::string(v), ""}, {"libnccl-devel", std::string(v), ""}};
  return {{"libnccl2", std::string(v), ""}, {"libnccl-dev", std::string(v), ""}};
}

std::vector<PackagePin> KernelPackages(std::string_view r, std::string_view m) {
  if (m == "rpm") {
    // "5.14.0-427.13.1.el9_4.x86_64" -> kernel-5.14.0-427.13.1.el9_4
    std::string_view k = r;
    for (std::string_view arch : {".x86_64", ".aarch64"})
      if (EndsWith(k, arch)) k.remove_suffix(arch.size());
    return {{"kernel", std::string(k), ""}, {"kernel-devel", std::string(k), ""}};
  }
  return {{"linux-image-" + std::string(r), "", ""}, {"linux-headers-" + std::string(r), "", ""}};
}

std::vector<PackagePin> OfedPackages(std::string_view v, std::string_view m) {
  if (m == "rpm") return {{"mlnx-ofed-all", std::string(v), ""}};
  return {{"mlnx-ofed-all", "", std::string(v)}};
}

std::string_view DebUpstream(std::string_view v) {
  size_t colon = v.find(':');
  if (colon != std::string_view::npos) v.remove_prefix(colon + 1);
  size_t dash = v.rfind('-');
  if (dash != std::string_view::npos) v = v.substr(0, dash);
  return v;
}

Result<std::string> PickMadisonVersion(std::string_view madison, std::string_view package,
                                       std::string_view upstream) {
  for (const Line& line : SplitLines(madison)) {
    auto cols = Split(line.text, "|");
    if (cols.size() < 3) continue;
    if (Trim(cols[0]) != package) continue;
    std::string_view version = Trim(cols[1]);
    // OFED's own versions contain '-' ("24.07-0.6.1.0"): a whole-version match counts too.
    if (version == upstream || DebUpstream(version) == upstream) return std::string(version);
  }
  return Diagnostic::Error("apply.resolve",
                           fmt::format("no version of {} with upstream {} in the node's apt "
                                       "sources (apt-cache madison {})",
                                       package, upstream, package),
                           {}, {}, "run apt-get update on the node or add the vendor repository");
}

std::string AptInstallCommand(const std::vector<PackagePin>& exact, bool allow_held) {
  // An install cut short (kill -9, a lost session) leaves dpkg's database half-done and apt
  // refuses everything ("dpkg was interrupted"): finish it first. A no-op when nothing is
  // pending. Lock::Timeout waits for another dpkg instead of failing at once (apt >= 1.9.11).
  std::string cmd =
      std::string(kDpkgRepair) + "; "
      "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --allow-downgrades "
      "-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "
      "-o DPkg::Lock::Timeout=300";
  if (allow_held) cmd += " --allow-change-held-packages";
  for (const auto& p : exact)
    cmd += " " + ShellQuote(p.version.empty() ? p.name : p.name + "=" + p.version);
  return cmd;
}

std::string AptHoldCommand(const std::vector<std::string>& names) {
  std::string cmd = "apt-mark hold";
  for (const auto& n : names) cmd += " " + ShellQuote(n);
  return cmd;
}

std::string DnfInstallCommand(const std::vector<PackagePin>& pins) {
  // The versionlock plugin is off for this one install (the old pin's lock would exclude the
  // new version); the lock itself stays until the install is done (see DnfInstallCommands).
  std::string cmd = "dnf install -y --allowerasing --disableplugin=versionlock";
  for (const auto& p : pins) {
    const std::string& v = p.version.empty() ? p.upstream : p.version;
    cmd += " " + ShellQuote(v.empty() ? p.name : p.name + "-" + v);
  }
  return cmd;
}

std::string MadisonCommand(std::string_view package) {
  return "apt-cache madison " + ShellQuote(package);
}

std::string DriverModuleStream(std::string_view v) {
  return "nvidia-driver:" + DriverBranch(v) + "-dkms";
}

std::vector<std::string> DnfInstallCommands(const std::vector<PackagePin>& pins,
                                            std::string_view module_stream) {
  std::vector<std::string> cmds;
  if (!module_stream.empty()) {
    // reset first: dnf refuses to enable another stream of a module while one is enabled
    std::string_view module = module_stream.substr(0, module_stream.find(':'));
    cmds.push_back("dnf module reset -y " + ShellQuote(module));
    cmds.push_back("dnf module enable -y " + ShellQuote(module_stream));
  }
  std::string unlock = "dnf versionlock delete", lock = "dnf versionlock add";
  for (const auto& p : pins) {
    const std::string& v = p.version.empty() ? p.upstream : p.version;
    unlock += " " + ShellQuote(p.name);
    lock += " " + ShellQuote(v.empty() ? p.name : p.name + "-" + v);
  }
  // Install first, then move the lock: a failed install (a repo down, a dependency) leaves the
  // old version installed and still locked, never an unlocked pin.
  cmds.push_back(DnfInstallCommand(pins));
  cmds.push_back(unlock);
  cmds.push_back(lock);
  return cmds;
}

std::vector<std::string> InstallCommands(std::string_view manager, const std::vector<PackagePin>& pins,
                                         const std::vector<std::string>& held,
                                         std::string_view module_stream) {
  if (manager == "rpm") return DnfInstallCommands(pins, module_stream);
  if (manager != "dpkg") return {};
  std::vector<std::string> cmds;
  std::vector<PackagePin> shown = pins;
  for (auto& p : shown) {
    if (!p.version.empty() || p.upstream.empty()) continue;
    cmds.push_back(MadisonCommand(p.name));
    p.version = p.upstream + "-*";
  }
  std::vector<std::string> rehold;
  for (const auto& p : pins)
    for (const auto& h : held)
      if (h == p.name) rehold.push_back(p.name);
  cmds.push_back(AptInstallCommand(shown, !rehold.empty()));
  if (!rehold.empty()) cmds.push_back(AptHoldCommand(rehold));
  return cmds;
}

Status InstallPins(NodeContext& ctx, std::string_view module, std::string_view manager,
                   std::vector<PackagePin> pins, const std::vector<std::string>& held,
                   std::string_view module_stream) {
  if (manager == "rpm") {
    for (const std::string& cmd : DnfInstallCommands(pins, module_stream)) {
      auto r = RunChecked(ctx, module, cmd);
      if (!r.ok()) return r.error();
    }
    return OkStatus();
  }
  if (manager != "dpkg")
    return Diagnostic::Error(fmt::format("apply.{}", module),
                             "the node has neither dpkg nor rpm: cannot install packages");
  for (auto& p : pins) {
    if (!p.version.empty() || p.upstream.empty()) continue;
    auto madison = RunChecked(ctx, module, MadisonCommand(p.name));
    if (!madison.ok()) return madison.error();
    auto v = PickMadisonVersion(madison->out, p.name, p.upstream);
    if (!v.ok()) return v.error();
    p.version = *v;
  }
  std::vector<std::string> rehold;
  for (const auto& p : pins)
    for (const auto& h : held)
      if (h == p.name) rehold.push_back(p.name);
  auto r = RunChecked(ctx, module, AptInstallCommand(pins, !rehold.empty()));
  if (!r.ok()) return r.error();
  if (!rehold.empty()) {
    auto h = RunChecked(ctx, module, AptHoldCommand(rehold));
    if (!h.ok()) return h.error();
  }
  return OkStatus();
}

}  // namespace plumb::modules
