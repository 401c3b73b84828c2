#include <doctest/doctest.h>

#include "schemas/suggest.h"

using namespace plumb::schemas;

TEST_CASE("did you mean: close words only") {
  CHECK(EditDistance("drivr", "driver") == 1);
  CHECK(EditDistance("", "abc") == 3);
  CHECK(DidYouMean("drivr", {"driver", "cuda", "nccl"}) == "driver");
  CHECK(DidYouMean("CUDA", {"driver", "cuda"}) == "cuda");
  CHECK(DidYouMean("zzzzzz", {"driver", "cuda"}).empty());
  CHECK(SuggestHint("zzzzzz", {"a", "b"}) == "expected one of: a, b");
  CHECK(SuggestHint("fabricmanger", {"driver", "fabricmanager"}) == "did you mean 'fabricmanager'?");
}

TEST_CASE("printable: hostile text cannot forge output") {
  CHECK(Printable("a\nb") == "a\\nb");
  CHECK(Printable("x\"y") == "x\\\"y");
  CHECK(Printable(std::string("a\x01", 2)) == "a\\x01");
  CHECK(Printable("1.9.0\xEF\xBC\x9B") == "1.9.0<U+FF1B>");   // fullwidth semicolon
  CHECK(Printable("a\xCD\xBE") == "a<U+037E>");               // Greek question mark
  CHECK(Printable(std::string(100, 'a'), 10) == std::string(10, 'a') + "...");
  CHECK(Printable("\xFF") == "\\xff");
}
