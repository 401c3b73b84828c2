#pragma once
/// THE place that maps a pinned version (driver, fabric manager, CUDA, NCCL, kernel, OFED) to the
/// packages that install it, per package manager, and builds the install commands.
///
/// apt (Debian/Ubuntu, NVIDIA's CUDA network repo):
///   nvidia.driver 550.90.07     -> cuda-drivers-550, nvidia-driver-550, each resolved on the node
///                                  with `apt-cache madison` to the repo version whose upstream part
///                                  is 550.90.07 (the NVIDIA repo says 550.90.07-1 / -0ubuntu1, the
///                                  Ubuntu archive -0ubuntu0.22.04.1: the revision is the repo's)
///   nvidia.fabricmanager V      -> nvidia-fabricmanager-<branch>, libnvidia-nscq-<branch> (resolved)
///   nvidia.cuda 12.4.1          -> cuda-toolkit-12-4=12.4.1-1
///   nvidia.nccl 2.21.5-1+cuda12.4 -> libnccl2=2.21.5-1+cuda12.4 libnccl-dev=2.21.5-1+cuda12.4
///   kernel 5.15.0-119-generic   -> linux-image-5.15.0-119-generic linux-headers-5.15.0-119-generic
///   ofed 24.07-0.6.1.0          -> mlnx-ofed-all (resolved: upstream 24.07-0.6.1.0)
///   packages {name: version}    -> name=version (exact, epoch included)
/// dnf (RHEL family): name-version, which dnf resolves itself:
///   nvidia-driver-V cuda-drivers-V; nvidia-fabric-manager-V; cuda-toolkit-12-4-12.4.1;
///   libnccl-V libnccl-devel-V; kernel-K kernel-devel-K (K without .arch); mlnx-ofed-all-V.
///   The driver comes from NVIDIA's modular repo: its branch stream is enabled first
///   (`dnf module enable nvidia-driver:550-dkms`, after a reset so a branch change is allowed),
///   then the exact version is installed inside it.
/// Every install is `-y`, non-interactive, allows downgrades, waits for the dpkg lock, and keeps
/// held packages held. On rpm every pin is held after its install: `dnf versionlock add
/// name-version` (python3-dnf-plugin-versionlock; a lock on another version would hide the
/// pinned one, so the pins' names are unlocked first).
#include <string>
#include <string_view>
#include <vector>

#include "modules/module.h"

namespace plumb::modules {

/// One package to install. `version` set: exactly that (apt "name=version", dnf
/// "name-version"). Else `upstream` set: apt resolves it with madison, dnf takes
/// "name-upstream". Neither: the name alone (the version is in the name: kernels).
struct PackagePin {
  std::string name;
  std::string version;
  std::string upstream;
  bool operator==(const PackagePin&) const = default;
};

/// "550" from "550.90.07" (the driver branch that names the apt packages).
std::string DriverBranch(std::string_view driver_version);
std::vector<PackagePin> DriverPackages(std::string_view version, std::string_view manager);
std::vector<PackagePin> FabricManagerPackages(std::string_view version, std::string_view manager);
std::vector<PackagePin> CudaPackages(std::string_view version, std::string_view manager);
std::vector<PackagePin> NcclPackages(std::string_view version, std::string_view manager);
std::vector<PackagePin> KernelPackages(std::string_view release, std::string_view manager);
std::vector<PackagePin> OfedPackages(std::string_view version, std::string_view manager);

/// Debian version without epoch and revision: "1:3.3.7-2" -> "3.3.7".
std::string_view DebUpstream(std::string_view version);
/// From `apt-cache madison` output, the version of `package` whose upstream is `upstream`
/// (or whose whole version is `upstream`; first = highest priority row); "apply.resolve" error
/// when none.
Result<std::string> PickMadisonVersion(std::string_view madison, std::string_view package,
                                       std::string_view upstream);

/// Finishes an interrupted dpkg run (packages unpacked but not configured) when `dpkg --audit`
/// lists any; prefixed to every apt install.
inline constexpr std::string_view kDpkgRepair =
    "if [ -n \"$(dpkg --audit 2>/dev/null)\" ]; then "
    "DEBIAN_FRONTEND=noninteractive dpkg --configure -a || exit 1; fi";

/// NVIDIA's RHEL module stream for a driver version: "nvidia-driver:550-dkms" (the branch
/// stream built with DKMS; "latest-dkms" would follow every new branch).
std::string DriverModuleStream(std::string_view driver_version);

/// Commands (every value through ShellQuote).
std::string AptInstallCommand(const std::vector<PackagePin>& exact, bool allow_held);
std::string AptHoldCommand(const std::vector<std::string>& names);
std::string DnfInstallCommand(const std::vector<PackagePin>& pins);
std::string MadisonCommand(std::string_view package);
/// The dnf steps for `pins`, in order: [`dnf module reset -y M`, `dnf module enable -y
/// M:S`] when `module_stream` ("M:S") is set; `dnf versionlock delete` of their names; the
/// install; `dnf versionlock add name-version...`.
std::vector<std::string> DnfInstallCommands(const std::vector<PackagePin>& pins,
                                            std::string_view module_stream = {});
/// What InstallPins will run, for the plan to show (params "commands"): the dnf steps, or
/// for apt the madison look-ups and the install, an upstream-only pin shown as
/// name=<upstream>-* (the exact version is read from madison on the node).
std::vector<std::string> InstallCommands(std::string_view manager, const std::vector<PackagePin>& pins,
                                         const std::vector<std::string>& held = {},
                                         std::string_view module_stream = {});
/// Installs `pins` on the node with `manager` ("dpkg" -> apt-get, "rpm" -> dnf): resolves
/// upstream-only apt pins with madison first, passes --allow-change-held-packages and re-holds
/// afterwards for names in `held`. Errors carry the failing command's stderr tail.
Status InstallPins(NodeContext& ctx, std::string_view module, std::string_view manager,
                   std::vector<PackagePin> pins, const std::vector<std::string>& held = {},
                   std::string_view module_stream = {});

}  // namespace plumb::modules
