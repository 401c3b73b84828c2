#include "plans/report/facts_age.h"

#include <fmt/format.h>

#include "plans/core/clock.h"
#include "plans/core/duration_text.h"

namespace plumb::plans::report {

std::optional<long long> FactsAgeSeconds(const std::string& gathered_at, const std::string& made_at) {
  auto g = ParseRfc3339(gathered_at), m = ParseRfc3339(made_at);
  if (!g || !m) return std::nullopt;
  return MillisBetween(*g, *m) / 1000;
}

std::string AgeText(long long s) { return FormatDuration(s, DurationStyle::kAge); }

std::string GatheredText(const std::string& gathered_at, const std::string& made_at) {
  if (gathered_at.empty()) return "facts gathered: not recorded";
  auto age = FactsAgeSeconds(gathered_at, made_at);
  // Read by this run (a live gather ends after the run started) or a minute ago: no age to say.
  if (!age || (*age > -60 && *age < 60)) return "facts gathered " + gathered_at;
  if (*age < 0) return fmt::format("facts gathered {}, {} after this report (clocks disagree)",
                                   gathered_at, AgeText(-*age));
  return fmt::format("facts gathered {}, {} before", gathered_at, AgeText(*age));
}

}  // namespace plumb::plans::report
