#include "plans/report/facts_age.h"

#include <fmt/format.h>

#include "plans/core/clock.h"

namespace plumb::plans::report {

std::optional<long long> FactsAgeSeconds(const std::string& gathered_at, const std::string& made_at) {
  auto g = ParseRfc3339(gathered_at), m = ParseRfc3339(made_at);
  if (!g || !m) return std::nullopt;
  return MillisBetween(*g, *m) / 1000;
}

std::string AgeText(long long s) {
  if (s < 0) s = -s;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m", s / 60);
  if (s < 86400) return fmt::format("{}h {:02}m", s / 3600, s % 3600 / 60);
  return fmt::format("{}d {}h", s / 86400, s % 86400 / 3600);
}

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
