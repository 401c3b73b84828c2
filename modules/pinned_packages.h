#pragma once
/// Every package a version pin installs, checked one by one. A pin installs several packages
/// (driver 550.90.07: cuda-drivers-550 and nvidia-driver-550); an install cut short (kill -9,
/// a lost SSH session) can leave one installed and the next missing or half-installed (dpkg
/// "iU", "iF"), while the version the module reads (the kernel module, nvidia-smi) already
/// says 550. So a module that installs pins also lists their packages in its probe (part
/// "pins", by name patterns: the probe does not depend on desired state) and its diff asks for
/// the install again while any of them is missing, half-installed, or at another version.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/package_map.h"
#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules {

/// Probe lines listing the packages matching `deb_patterns` / `rpm_patterns` (dpkg-query and
/// rpm -qa globs, quoted) as part "pins".
std::string PinnedPackagesSnippet(const std::vector<std::string>& deb_patterns,
                                  const std::vector<std::string>& rpm_patterns);

/// The "pins" part -> {name: {"version": ...}} of the fully installed packages (a
/// half-installed one is left out: it is not installed as far as a pin is concerned).
/// Absent part: nullopt-like null JSON (a snapshot from before this probe: not checked).
Result<nlohmann::json> PinnedPackagesFrom(const std::vector<ProbePart>& parts,
                                          std::string_view module);

/// facts["packages"] from PinnedPackagesFrom; when the part cannot be read, a part error under
/// kPartErrorsKey (modules/module.h) and no "packages" key: the module is then not judged on
/// that node, and its other facts are kept.
void AddPinnedPackages(const std::vector<ProbePart>& parts, std::string_view module,
                       nlohmann::json& facts);

/// What keeps `pins` from being installed as pinned, in words ("nvidia-driver-550 is not
/// (fully) installed", "libnccl-dev is at 2.20.3-1+cuda12.2, not 2.21.5-1+cuda12.4"); empty
/// when every pin is in place or `installed` is null (not probed).
std::vector<std::string> PinGaps(const std::vector<PackagePin>& pins, const nlohmann::json& installed,
                                 std::string_view manager);

}  // namespace plumb::modules
