// `plumb version` (cli/version_text.h): the text a bug report pastes, and the same as JSON.
#include <doctest/doctest.h>

#include "cli/version_text.h"

using namespace plumb::cli;

TEST_CASE("version_text: version, commit, allocator, then each library in order, aligned") {
  const BuildInfo b{"1.2.3", "abc123", "mimalloc 2.0.9",
                    {{"libssh", "0.10.6/openssl/zlib"}, {"libgit2", "1.5.1"}, {"averyverylongname", "1"}}};
  CHECK(VersionText(b) ==
        "plumb 1.2.3\n"
        "commit     abc123\n"
        "allocator  mimalloc 2.0.9\n"
        "libssh     0.10.6/openssl/zlib\n"
        "libgit2    1.5.1\n"
        "averyverylongname 1\n");
}

TEST_CASE("version_text: the JSON names each library") {
  const BuildInfo b{"1.2.3", "abc123", "system malloc", {{"libcurl", "7.88.1"}}};
  CHECK(VersionJson(b) == nlohmann::json{{"version", "1.2.3"},
                                         {"commit", "abc123"},
                                         {"allocator", "system malloc"},
                                         {"libraries", {{"libcurl", "7.88.1"}}}});
  CHECK(VersionJson({"1", "c", "a", {}})["libraries"] == nlohmann::json::object());
}
