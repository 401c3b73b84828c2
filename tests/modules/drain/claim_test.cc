// Claims in the scheduler's free text (modules/drain/claim.h).
#include <doctest/doctest.h>

#include "modules/drain/claim.h"

using namespace plumb::modules;

TEST_CASE("claim: the token round-trips, inside an admin's comment or alone") {
  const NodeClaim c{"20261201-191500-ab12", 1796152500};
  CHECK(ClaimToken(c) == "[plumb-claim:20261201-191500-ab12@1796152500]");
  for (std::string text : {ClaimToken(c), "GPU3 fan noisy " + ClaimToken(c),
                           ClaimToken(c) + " then words", std::string("20261201-191500-ab12@1796152500")}) {
    CAPTURE(text);
    auto got = FindClaim(text);
    REQUIRE(got);
    CHECK(got->run == c.run);
    CHECK(got->since == c.since);
  }
  CHECK_FALSE(FindClaim(""));
  CHECK_FALSE(FindClaim("GPU3 fan noisy"));
  CHECK_FALSE(FindClaim("[plumb-claim:run@]"));
  CHECK_FALSE(FindClaim("[plumb-claim:@12]"));
  CHECK_FALSE(FindClaim("[plumb-claim:run@12x]"));
  CHECK_FALSE(FindClaim("[plumb-claim:run@12"));   // cut short
}

TEST_CASE("claim: writing and clearing keeps the admin's words") {
  const NodeClaim c{"r1", 100};
  CHECK(WithClaim("", c) == "[plumb-claim:r1@100]");
  CHECK(WithClaim("GPU3 fan noisy", c) == "GPU3 fan noisy [plumb-claim:r1@100]");
  // A second claim replaces the first (a resumed run, another run's leftover).
  CHECK(WithClaim("GPU3 [plumb-claim:r0@5] fan", c) == "GPU3 fan [plumb-claim:r1@100]");
  CHECK(WithClaim("GPU3 fan noisy [plumb-claim:r1@100]", {}) == "GPU3 fan noisy");
  CHECK(WithClaim("[plumb-claim:r1@100]", {}) == "");
  CHECK(WithClaim("no claim here", {}) == "no claim here");
}

TEST_CASE("claim: one older than the TTL is a dead run's leftover") {
  const NodeClaim c{"r1", 1000};
  CHECK(ClaimLive(c, 1000));
  CHECK(ClaimLive(c, 1000 + kClaimTtlSeconds - 1));
  CHECK_FALSE(ClaimLive(c, 1000 + kClaimTtlSeconds));
  CHECK_FALSE(ClaimLive(NodeClaim{}, 1000));
}
