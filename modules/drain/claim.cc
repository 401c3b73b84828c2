#include "modules/drain/claim.h"

#include <cstdlib>

#include <fmt/format.h>

namespace plumb::modules {
namespace {
constexpr std::string_view kOpen = "[plumb-claim:";

// "run@since" -> claim; nullopt when malformed.
std::optional<NodeClaim> ParseBody(std::string_view body) {
  const auto at = body.rfind('@');
  if (at == std::string_view::npos || at == 0 || at + 1 == body.size()) return std::nullopt;
  NodeClaim c;
  c.run = std::string(body.substr(0, at));
  const std::string digits(body.substr(at + 1));
  if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  c.since = std::strtoll(digits.c_str(), nullptr, 10);
  if (c.run.find_first_of(" []") != std::string::npos) return std::nullopt;
  return c;
}
}  // namespace

std::string ClaimToken(const NodeClaim& c) {
  return fmt::format("{}{}@{}]", kOpen, c.run, c.since);
}

std::optional<NodeClaim> FindClaim(std::string_view text) {
  const auto open = text.find(kOpen);
  if (open == std::string_view::npos) {
    // A bare value (an annotation holds only the claim).
    if (text.find(' ') == std::string_view::npos && !text.empty()) return ParseBody(text);
    return std::nullopt;
  }
  const auto body = open + kOpen.size();
  const auto close = text.find(']', body);
  if (close == std::string_view::npos) return std::nullopt;
  return ParseBody(text.substr(body, close - body));
}

std::string WithClaim(std::string_view text, const NodeClaim& c) {
  std::string out;
  for (;;) {
    const auto open = text.find(kOpen);
    const auto close = open == std::string_view::npos ? open : text.find(']', open);
    if (close == std::string_view::npos) {
      out += text;
      break;
    }
    out += text.substr(0, open);
    text.remove_prefix(close + 1);
  }
  // Tidy the spaces a removed token leaves behind.
  std::string tidy;
  for (char ch : out)
    if (!(ch == ' ' && (tidy.empty() || tidy.back() == ' '))) tidy += ch;
  while (!tidy.empty() && tidy.back() == ' ') tidy.pop_back();
  if (!c.run.empty()) tidy += (tidy.empty() ? "" : " ") + ClaimToken(c);
  return tidy;
}

bool ClaimLive(const NodeClaim& c, int64_t now) {
  return !c.run.empty() && now - c.since < kClaimTtlSeconds;
}

}  // namespace plumb::modules
