// The signed-commit rule: the policy comes from the trusted base (first parent, or
// --trust-policy-from), never from the commit judged; unsigned, unknown-key and altered
// commits are refused with the reason. The signatures here are stand-ins a fake verifier
// reads (real ssh-keygen and gpg signatures: tests/e2e/signed_commits.sh); the commits are
// real git objects, read through libgit2.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "plans/trust/commit_trust.h"
#include "plans/trust/signature_tools.h"

using namespace plumb;
namespace fs = std::filesystem;

namespace {

// "GOOD <who>" is a good signature by <who>; "ALTERED" one that does not match its data.
class FakeVerifier final : public plans::SignatureVerifier {
 public:
  int calls = 0;
  std::string last_allowed;
  Result<plans::Signer> VerifySsh(std::string_view sig, std::string_view data,
                                  std::string_view allowed) override {
    return Check("ssh", sig, data, allowed);
  }
  Result<plans::Signer> VerifyOpenPgp(std::string_view sig, std::string_view data,
                                      std::string_view keyring) override {
    return Check("openpgp", sig, data, keyring);
  }

 private:
  Result<plans::Signer> Check(const char* format, std::string_view sig, std::string_view data,
                              std::string_view allowed) {
    ++calls;
    last_allowed = std::string(allowed);
    if (data.find("gpgsig") != std::string_view::npos)
      return Diagnostic::Error("trust.tool", "the signed data still holds the signature");
    if (sig.find("ALTERED") != std::string_view::npos)
      return Diagnostic::Error("trust.bad-signature", "signature does not match");
    auto at = sig.find("GOOD ");
    if (at == std::string_view::npos) return Diagnostic::Error("trust.bad-signature", "garbage");
    std::string who(sig.substr(at + 5, sig.find('\n', at) - at - 5));
    if (allowed.find(who) == std::string_view::npos)
      return Diagnostic::Error("trust.unknown-key", "signed by a key allowed_signers does not list");
    return plans::Signer{format, who, "SHA256:" + who};
  }
};

class Repo {
 public:
  Repo() {
    char tmpl[] = "/tmp/plumb-trust-test.XXXXXX";
    dir_ = mkdtemp(tmpl);
    out_ = dir_ + ".out";   // beside the repo: .git does not exist before init
    Git("init -q -b main");
  }
  ~Repo() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    fs::remove(out_, ec);
  }
  const std::string& dir() const { return dir_; }
  void Write(const std::string& path, const std::string& text) {
    fs::create_directories((fs::path(dir_) / path).parent_path());
    std::ofstream(fs::path(dir_) / path) << text;
  }
  void Remove(const std::string& path) { fs::remove(fs::path(dir_) / path); }
  std::string Git(const std::string& args) {
    const std::string& out = out_;
    std::string cmd = "cd '" + dir_ + "' && GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "
                      "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t.example GIT_COMMITTER_NAME=t "
                      "GIT_COMMITTER_EMAIL=t@t.example git " + args + " >'" + out + "' 2>&1";
    int rc = std::system(cmd.c_str());
    std::ifstream in(out);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string why = cmd + "\n" + text;
    REQUIRE_MESSAGE(rc == 0, why);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }
  // Commits the working tree; `signature` (its lines) goes in a gpgsig header when not empty.
  std::string Commit(const std::string& message, const std::string& signature = {}) {
    Git("add -A");
    const std::string tree = Git("write-tree");
    std::string parent;
    if (std::system(("git -C '" + dir_ + "' rev-parse -q --verify HEAD >/dev/null 2>&1").c_str()) == 0)
      parent = Git("rev-parse HEAD");
    std::string obj = "tree " + tree + "\n";
    if (!parent.empty()) obj += "parent " + parent + "\n";
    obj += "author t <t@t.example> 1767225600 +0000\ncommitter t <t@t.example> 1767225600 +0000\n";
    if (!signature.empty()) {
      obj += "gpgsig";
      std::string line;
      for (char c : signature) {
        if (c == '\n') {
          obj += " " + line + "\n";
          line.clear();
        } else {
          line += c;
        }
      }
      if (!line.empty()) obj += " " + line + "\n";
    }
    obj += "\n" + message + "\n";
    Write(".git/plumb-commit-object", obj);
    const std::string sha = Git("hash-object -t commit -w .git/plumb-commit-object");
    Git("update-ref refs/heads/main " + sha);
    return sha;
  }

 private:
  std::string dir_;
  std::string out_;
};

std::string SshSig(const std::string& body) {
  return "-----BEGIN SSH SIGNATURE-----\n" + body + "\n-----END SSH SIGNATURE-----";
}

const char* kPolicy = "require_signed_commits: true\nallowed_signers: allowed_signers\n";

// A repo whose first commit holds a policy allowing alice's key.
struct Guarded {
  Repo repo;
  std::string base;
  FakeVerifier v;
  Guarded() {
    repo.Write("inventory.yaml", "cluster: c\n");
    repo.Write("policy.yaml", kPolicy);
    repo.Write("allowed_signers", "alice ssh-ed25519 AAAA-alice\n");
    base = repo.Commit("policy", SshSig("GOOD alice"));
  }
};

}  // namespace

TEST_CASE("commit trust: a commit signed by a key the first parent's policy allows proceeds") {
  Guarded g;
  g.repo.Write("inventory.yaml", "cluster: c2\n");
  const std::string c = g.repo.Commit("change", SshSig("GOOD alice"));
  auto t = plans::CheckCommitTrust(g.repo.dir(), "HEAD", "", g.v);
  REQUIRE_MESSAGE(t.ok(), t.error().ToString());
  CHECK(t->commit == c);
  CHECK(t->base == g.base);
  CHECK(t->base_from == "first parent");
  CHECK(t->required);
  REQUIRE(t->signer);
  CHECK(t->signer->ToString() == "ssh alice (SHA256:alice)");
  CHECK(t->info.author == "t <t@t.example>");
  CHECK(t->note.find("signed by ssh alice") != std::string::npos);
}

TEST_CASE("commit trust: unsigned, unknown key, altered: refused with the reason") {
  Guarded g;
  SUBCASE("unsigned") {
    g.repo.Write("inventory.yaml", "cluster: c2\n");
    g.repo.Commit("unsigned change");
    auto t = plans::CheckCommitTrust(g.repo.dir(), "HEAD", "", g.v);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().code == "trust.unsigned");
    CHECK(t.error().message.find("is not signed, and policy.yaml at " + g.base.substr(0, 12) +
                                 " (first parent) requires signed commits") != std::string::npos);
  }
  SUBCASE("signed by a key the base does not allow") {
    g.repo.Commit("mallory's", SshSig("GOOD mallory"));
    auto t = plans::CheckCommitTrust(g.repo.dir(), "HEAD", "", g.v);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().code == "trust.unknown-key");
    CHECK(t.error().message.find("SSH keys in allowed_signers") != std::string::npos);
  }
  SUBCASE("altered after signing") {
    g.repo.Commit("altered", SshSig("ALTERED GOOD alice"));
    auto t = plans::CheckCommitTrust(g.repo.dir(), "HEAD", "", g.v);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().code == "trust.bad-signature");
    CHECK(t.error().hint.find("altered after signing") != std::string::npos);
  }
  SUBCASE("an X.509 signature") {
    g.repo.Commit("smime", "-----BEGIN SIGNED MESSAGE-----\nx\n-----END SIGNED MESSAGE-----");
    auto t = plans::CheckCommitTrust(g.repo.dir(), "HEAD", "", g.v);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().code == "trust.unsupported");
  }
}

TEST_CASE("commit trust: a commit cannot vouch for itself") {
  Guarded g;
  SUBCASE("an unsigned commit that deletes the policy is judged by the policy before it") {
    g.repo.Remove("policy.yaml");
    g.repo.Commit("drop the policy");
    auto t = plans::CheckCommitTrust(g.repo.dir(), "HEAD", "", g.v);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().code == "trust.unsigned");
  }
  SUBCASE("a commit that adds its signer's key is judged by the keys before it") {
    g.repo.Write("allowed_signers", "alice ssh-ed25519 AAAA-alice\nmallory ssh-ed25519 AAAA-m\n");
    g.repo.Commit("let me in", SshSig("GOOD mallory"));
    auto t = plans::CheckCommitTrust(g.repo.dir(), "HEAD", "", g.v);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().code == "trust.unknown-key");
    CHECK(g.v.last_allowed.find("mallory") == std::string::npos);   // the base's keys judged
  }
  SUBCASE("--trust-policy-from naming the commit itself is refused") {
    g.repo.Commit("x", SshSig("GOOD alice"));
    auto t = plans::CheckCommitTrust(g.repo.dir(), "HEAD", "main", g.v);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().code == "trust.self");
  }
}

TEST_CASE("commit trust: --trust-policy-from pins the base; a second unsigned commit gains nothing") {
  Guarded g;
  g.repo.Git("tag trusted");
  g.repo.Remove("policy.yaml");
  g.repo.Commit("drop the policy (unsigned)");
  g.repo.Write("inventory.yaml", "cluster: evil\n");
  g.repo.Commit("then change the cluster (unsigned)");
  // With the first-parent default the second commit is judged by the first, which dropped
  // the policy: this is the gap --trust-policy-from closes.
  auto loose = plans::CheckCommitTrust(g.repo.dir(), "HEAD", "", g.v);
  REQUIRE(loose.ok());
  CHECK_FALSE(loose->required);
  auto pinned = plans::CheckCommitTrust(g.repo.dir(), "HEAD", "trusted", g.v);
  REQUIRE_FALSE(pinned.ok());
  CHECK(pinned.error().code == "trust.unsigned");
  CHECK(pinned.error().message.find("(--trust-policy-from trusted)") != std::string::npos);
}

TEST_CASE("commit trust: no policy, a root commit, a policy that does not require signatures") {
  SUBCASE("a repo without policy.yaml: every commit proceeds, the note says why") {
    Repo r;
    r.Write("inventory.yaml", "cluster: c\n");
    r.Commit("one");
    r.Write("inventory.yaml", "cluster: d\n");
    r.Commit("two");
    FakeVerifier v;
    auto t = plans::CheckCommitTrust(r.dir(), "HEAD", "", v);
    REQUIRE(t.ok());
    CHECK_FALSE(t->signer);
    CHECK(t->note == "not signed; no policy requires signatures");
    CHECK(v.calls == 0);
  }
  SUBCASE("a root commit whose own policy asks for signatures: no one can vouch for it") {
    Repo r;
    r.Write("policy.yaml", kPolicy);
    r.Write("allowed_signers", "alice ssh-ed25519 AAAA\n");
    r.Commit("root", SshSig("GOOD alice"));
    FakeVerifier v;
    auto t = plans::CheckCommitTrust(r.dir(), "HEAD", "", v);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().code == "trust.no-base");
  }
  SUBCASE("keys named but signatures not required: checked for the record, never fatal") {
    Repo r;
    r.Write("policy.yaml", "require_signed_commits: false\nallowed_signers: allowed_signers\n");
    r.Write("allowed_signers", "alice ssh-ed25519 AAAA\n");
    r.Commit("base");
    r.Write("x", "1");
    r.Commit("altered", SshSig("ALTERED"));
    FakeVerifier v;
    auto t = plans::CheckCommitTrust(r.dir(), "HEAD", "", v);
    REQUIRE(t.ok());
    CHECK(t->note.find("signature not verified") != std::string::npos);
  }
  SUBCASE("a base whose policy.yaml is broken refuses, naming where") {
    Repo r;
    r.Write("policy.yaml", "require_signed_commits: true\n");   // no keys
    r.Commit("base");
    r.Write("x", "1");
    r.Commit("next");
    FakeVerifier v;
    auto t = plans::CheckCommitTrust(r.dir(), "HEAD", "", v);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().code == "trust.policy");
    CHECK(t.error().message.find("policy.yaml:1:25") != std::string::npos);
  }
}

TEST_CASE("signature tools: what ssh-keygen and gpg print, parsed") {
  auto ok = plans::ParseSshVerify(
      "Good \"git\" signature for alice@example.com with ED25519 key SHA256:Xy0/abc+def\n");
  REQUIRE(ok.ok());
  CHECK(ok->identity == "alice@example.com");
  CHECK(ok->key == "SHA256:Xy0/abc+def");
  CHECK_FALSE(plans::ParseSshVerify("Could not verify signature.\n").ok());

  // gpg --status-fd 1 --verify (GnuPG 2.2), a good signature.
  const std::string good =
      "[GNUPG:] NEWSIG\n"
      "[GNUPG:] KEY_CONSIDERED 4F6E2A3B1C0D9E8F7A6B5C4D3E2F1A0B9C8D7E6F 0\n"
      "[GNUPG:] SIG_ID abc 2026-01-01 1767225600\n"
      "[GNUPG:] GOODSIG 3E2F1A0B9C8D7E6F Carol Signer <carol@example.com>\n"
      "[GNUPG:] VALIDSIG 11112222333344445555666677778888AAAABBBB 2026-01-01 1767225600 0 4 0 22 "
      "10 00 4F6E2A3B1C0D9E8F7A6B5C4D3E2F1A0B9C8D7E6F\n"
      "[GNUPG:] TRUST_UNDEFINED 0 pgp\n";
  auto g = plans::ParseGpgStatus(good);
  REQUIRE(g.ok());
  CHECK(g->identity == "Carol Signer <carol@example.com>");
  CHECK(g->key == "4F6E2A3B1C0D9E8F7A6B5C4D3E2F1A0B9C8D7E6F");   // the primary key
  auto bad = plans::ParseGpgStatus("[GNUPG:] NEWSIG\n[GNUPG:] BADSIG 3E2F1A0B9C8D7E6F Carol\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == "trust.bad-signature");
  auto unknown = plans::ParseGpgStatus(
      "[GNUPG:] ERRSIG 3E2F1A0B9C8D7E6F 22 10 00 1767225600 9 -\n[GNUPG:] NO_PUBKEY 3E2F1A0B9C8D7E6F\n");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code == "trust.unknown-key");
  auto expired = plans::ParseGpgStatus(good + "[GNUPG:] EXPKEYSIG 3E2F1A0B9C8D7E6F Carol\n");
  CHECK_FALSE(expired.ok());
  CHECK_FALSE(plans::ParseGpgStatus("").ok());
}
