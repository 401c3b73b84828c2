#pragma once
/// When the facts a plan or a drift report judged were read, said in every format: a
/// month-old snapshot planned today is not "now". The time is the gather's (or the snapshot's
/// own `gathered_at` with --facts); the age is counted to when the report was made.
#include <optional>
#include <string>

namespace plumb::plans::report {

/// Seconds from `gathered_at` to `made_at` (both RFC 3339), or nullopt when either is not known.
std::optional<long long> FactsAgeSeconds(const std::string& gathered_at, const std::string& made_at);

/// An age for people: "45s", "12m", "3h 05m", "31d 2h" (FormatDuration's kAge style).
std::string AgeText(long long seconds);

/// "facts gathered 2026-10-30T12:00:00Z, 31d 2h before" / "facts gathered 2026-11-29T23:59:01Z"
/// (a fresh read: under a minute) / "facts gathered: not recorded".
std::string GatheredText(const std::string& gathered_at, const std::string& made_at);

}  // namespace plumb::plans::report
