#pragma once
/// Pure parsers for the installed-package lists:
///   dpkg-query -W -f='${Package}\t${Version}\t${db:Status-Abbrev}\n'
///   rpm -qa --qf '%{NAME}\t%{EPOCH}\t%{VERSION}-%{RELEASE}\t%{ARCH}\n'
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::packages {

/// The dpkg-query format string the probes use (shell-quoted where used).
inline constexpr std::string_view kDpkgFormat = "${Package}\\t${Version}\\t${db:Status-Abbrev}\\n";
/// The rpm query format the probes use.
inline constexpr std::string_view kRpmFormat = "%{NAME}\\t%{EPOCH}\\t%{VERSION}-%{RELEASE}\\t%{ARCH}\\n";

struct Package {
  std::string name;
  std::string version;   ///< dpkg: as dpkg prints it ("1:3.3.7"); rpm: "[E:]V-R"
  std::string arch;      ///< rpm only
  bool installed = true;
  bool held = false;     ///< dpkg selection "hold"
};

/// `module` names the caller in diagnostics ("packages", "nccl"). Lines "dpkg-query: no packages
/// found matching X" are skipped (a missing name queried on purpose).
Result<std::vector<Package>> ParseDpkgQuery(std::string_view text, std::string_view module = "packages");
/// Lines "package X is not installed" are skipped (rpm -q of a missing name).
Result<std::vector<Package>> ParseRpmQuery(std::string_view text, std::string_view module = "packages");

/// One entry of dnf's versionlock list (python3-dnf-plugin-versionlock; `dnf versionlock list`
/// prints /etc/dnf/plugins/versionlock.list's entries): "nvidia-driver-3:550.90.07-1.el9.*".
struct VersionLock {
  std::string name;
  std::string evr;        ///< "3:550.90.07-1.el9" (the epoch always written, 0 included)
  bool exclude = false;   ///< "!name-E:V-R.*": that version excluded, not locked
};
/// `dnf versionlock list` or the list file: comments, blank lines and dnf's "Last metadata
/// expiration check" line skipped; any other line must be [!]NAME-EPOCH:VERSION-RELEASE(.*|.ARCH).
Result<std::vector<VersionLock>> ParseVersionlockList(std::string_view text);

/// Parts list, pm, locks? -> {"manager", "packages": {name: {"version", "held", "versions"?}}}.
/// On rpm "held" is a versionlock on the installed version (part "locks", the list file).
Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts);
/// Packages -> the facts map above (installed ones only; several versions of one name, as
/// rpm kernels, are all listed in "versions" and "version" is the last one listed).
nlohmann::json PackagesJson(const std::vector<Package>& pkgs);

/// Does an installed `have` satisfy a desired `want`? Exact match; for rpm also a `want`
/// without epoch or without release matching the installed version's corresponding part.
bool VersionMatches(std::string_view manager, std::string_view want, std::string_view have);

}  // namespace plumb::modules::packages
