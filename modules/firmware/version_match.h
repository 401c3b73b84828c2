#pragma once
/// How a pinned firmware version matches the Version a BMC reports (pure).
///
/// Redfish's Version is free-form, and vendors append the image's build date to it: HPE iLO
/// reports "2.70 May 16 2022", its System ROM "A47 v2.58 (05/19/2022)". A pin names the version
/// the operator means ("2.70", "A47 v2.58"); it matches a reported Version, after trimming both,
///   1. when they are equal, or
///   2. when the Version is the pin, one space, and a build date in one of these forms, the
///      whole rest of the string:  "May 16 2022" (month name, day, year: iLO),
///      "(05/19/2022)" (MM/DD/YYYY in parentheses: HPE ROMs), "(2022-05-19)" (ISO in
///      parentheses).
/// Nothing else: "2.7" never matches "2.70", "2.70" never matches "2.70.1" or "2.70 Build 3",
/// and a pin that carries a date ("2.70 May 16 2022") matches that build only.
#include <string>

namespace plumb::modules::firmware {

/// True when `reported` is the version `pinned` names (the rule above).
bool VersionMatches(const std::string& pinned, const std::string& reported);

/// `reported` without the trailing build date rule 2 recognises ("2.70 May 16 2022" -> "2.70");
/// `reported` trimmed when it has none.
std::string VersionWithoutBuildDate(const std::string& reported);

}  // namespace plumb::modules::firmware
