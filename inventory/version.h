#pragma once
/// Dotted version numbers as NVIDIA writes them ("550.90.07", "12.4.1", "570.26").
#include <optional>
#include <string>
#include <vector>

namespace plumb::inventory {

/// The numeric components of `v` ("550.90.07" -> {550, 90, 7}); nullopt unless `v` is
/// digits separated by single dots.
std::optional<std::vector<long>> ParseDotted(const std::string& v);

/// <0, 0, >0 as a is older, equal, newer than b, comparing components numerically; missing
/// trailing components count as 0 ("570.26" == "570.26.0"). Both must parse (ParseDotted).
int CompareDotted(const std::vector<long>& a, const std::vector<long>& b);

/// True if `prefix`'s components are a leading run of `v`'s ("12.4" is a prefix of "12.4.1").
bool DottedPrefix(const std::vector<long>& prefix, const std::vector<long>& v);

/// "90s", "10m", "4h", "1d", "1h30m" -> seconds; nullopt when malformed or absurd (> 1 year).
std::optional<long> ParseDuration(const std::string& d);

}  // namespace plumb::inventory
