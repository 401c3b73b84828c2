#pragma once
/// Claims: how runs that do not share a journal keep one max_unavailable between them.
///
/// A drain takes a node out at once, so a run that drains first and counts afterwards has, for
/// a moment, more nodes out than the budget whenever another run drained at the same time (the
/// testbed saw 6 out of 3 for half a second). So a run first *claims* the node in the scheduler
/// (Slurm: a token in the node's comment; Kubernetes: an annotation), which takes nothing out of
/// service, then reads the scope and drains only if the nodes out plus every other live claim
/// leave room for this one; otherwise it clears its claim and gives way. Every claim is written
/// before its run reads, so of two runs racing for the last slot, the later reader sees the
/// earlier claim and gives way (both may give way; each retries after a random delay): the
/// drains never exceed the budget. A claim is cleared once its drain is in place (the drain
/// itself then counts), and one older than kClaimTtlSeconds (a run that died between claim and
/// drain) is ignored.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace plumb::modules {

/// A claim older than this is a leftover of a run that died before its drain: ignored. Claims
/// live for one scheduler round trip, so this only has to outlast clock skew between runners.
inline constexpr int64_t kClaimTtlSeconds = 600;

struct NodeClaim {
  std::string run;      ///< the claiming run's id
  int64_t since = 0;    ///< unix seconds, the claimer's clock
};

/// "[plumb-claim:<run>@<since>]": the token kept in a free-text field (Slurm's node comment).
std::string ClaimToken(const NodeClaim& c);
/// The first claim token in `text`, if any ("run@since" alone is accepted too: a Kubernetes
/// annotation's value).
std::optional<NodeClaim> FindClaim(std::string_view text);
/// `text` without its claim token(s), with `c`'s token appended (after one space) when c.run is
/// not empty: an admin's comment is kept as it was.
std::string WithClaim(std::string_view text, const NodeClaim& c);
/// Is the claim still live at `now` (unix seconds)?
bool ClaimLive(const NodeClaim& c, int64_t now);

}  // namespace plumb::modules
