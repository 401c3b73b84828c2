// policy.yaml as one tree states it: the rule, the key files it names from the same tree, and
// located errors for every way it can be wrong.
#include <doctest/doctest.h>

#include "inventory/trust_policy.h"

using namespace plumb;
using namespace plumb::inventory;
using Files = std::map<std::string, std::string>;

namespace {
std::string Codes(const LoadedPolicy& p) {
  std::string s;
  for (const auto& d : p.diags.items())
    s += d.code + " " + d.where.ToString() + ": " + d.message + " (hint: " + d.hint + ")\n";
  return s;
}
}  // namespace

TEST_CASE("trust policy: absent, and a valid one with its keys read from the same tree") {
  MemorySource none;
  auto p = LoadTrustPolicy(none);
  CHECK(p.ok());
  CHECK_FALSE(p.policy.has_value());

  MemorySource tree(Files{{"policy.yaml", "require_signed_commits: true\nallowed_signers: keys/allowed\n"
                                     "gpg_keyring: keys/allowed.gpg\n"},
                     {"keys/allowed", "alice@example.com ssh-ed25519 AAAA\n"},
                     {"keys/allowed.gpg", std::string("\x99\x01\x0d", 3)}});
  auto q = LoadTrustPolicy(tree);
  REQUIRE_MESSAGE(q.ok(), Codes(q));
  REQUIRE(q.policy);
  CHECK(q.policy->require_signed_commits);
  CHECK(q.policy->allowed_signers_text == "alice@example.com ssh-ed25519 AAAA\n");
  CHECK(q.policy->gpg_keyring_data.size() == 3);
}

TEST_CASE("trust policy: every mistake is a located error") {
  SUBCASE("a misspelt key: did you mean") {
    MemorySource t(Files{{"policy.yaml", "require_signed_commit: true\n"}});
    auto p = LoadTrustPolicy(t);
    CHECK_FALSE(p.ok());
    CHECK(Codes(p).find("policy.yaml:1:1") != std::string::npos);
    CHECK(Codes(p).find("require_signed_commits") != std::string::npos);
  }
  SUBCASE("signatures required, no keys") {
    MemorySource t(Files{{"policy.yaml", "require_signed_commits: true\n"}});
    CHECK(Codes(LoadTrustPolicy(t)).find("policy.no-keys policy.yaml:1:25") != std::string::npos);
  }
  SUBCASE("a key file that is not in the tree") {
    MemorySource t(Files{{"policy.yaml", "require_signed_commits: true\nallowed_signers: nope\n"}});
    CHECK(Codes(LoadTrustPolicy(t)).find("policy.missing-file policy.yaml:2:18") != std::string::npos);
  }
  SUBCASE("a path out of the repo") {
    MemorySource t(Files{{"policy.yaml", "allowed_signers: a/../../etc/passwd\n"}});
    CHECK(Codes(LoadTrustPolicy(t)).find("policy.path") != std::string::npos);
    MemorySource abs(Files{{"policy.yaml", "allowed_signers: /etc/passwd\n"}});
    CHECK(Codes(LoadTrustPolicy(abs)).find("schema.pattern") != std::string::npos);
  }
  SUBCASE("a string for a boolean") {
    MemorySource t(Files{{"policy.yaml", "require_signed_commits: yes\n"}});
    CHECK(Codes(LoadTrustPolicy(t)).find("schema.type") != std::string::npos);
  }
}
