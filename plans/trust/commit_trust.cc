#include "plans/trust/commit_trust.h"

#include <fmt/format.h>

namespace plumb::plans {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string Short(const std::string& sha) { return sha.substr(0, 12); }

// "policy.yaml at 1a2b3c4d5e6f (first parent)": where the rule came from, for every message.
std::string PolicyAt(const std::string& base, const std::string& from) {
  return fmt::format("{} at {} ({})", inventory::kPolicyFile, Short(base), from);
}

std::string KeysOf(const inventory::TrustPolicy& p) {
  std::string keys;
  if (!p.allowed_signers.empty()) keys = "SSH keys in " + p.allowed_signers;
  if (!p.gpg_keyring.empty())
    keys += (keys.empty() ? "" : ", ") + std::string("OpenPGP keys in ") + p.gpg_keyring;
  return keys.empty() ? "no keys" : keys;
}

}  // namespace

std::string Signer::ToString() const {
  return fmt::format("{} {} ({})", format, identity.empty() ? "(no identity)" : identity, key);
}

Result<CommitTrust> JudgeCommit(const inventory::CommitInfo& commit, const std::string& base,
                                const std::string& base_from,
                                const std::optional<inventory::TrustPolicy>& policy,
                                SignatureVerifier& verifier) {
  CommitTrust t;
  t.commit = commit.commit;
  t.info = commit;
  t.base = base;
  t.base_from = base_from;
  t.required = policy && policy->require_signed_commits;
  const std::string c = Short(commit.commit);
  const bool has_keys = policy && (!policy->allowed_signers.empty() || !policy->gpg_keyring.empty());
  auto refuse = [&](const char* code, std::string message, std::string hint) -> Result<CommitTrust> {
    return Diagnostic::Error(code, std::move(message), {}, inventory::kPolicyFile, std::move(hint));
  };
  if (commit.signature.empty()) {
    if (t.required)
      return refuse("trust.unsigned",
                    fmt::format("commit {} is not signed, and {} requires signed commits", c,
                                PolicyAt(base, base_from)),
                    fmt::format("sign it with an allowed key ({}): git commit -S --amend, or "
                                "git rebase --exec 'git commit -S --amend --no-edit'",
                                KeysOf(*policy)));
    t.note = policy ? fmt::format("not signed; {} does not require signatures", PolicyAt(base, base_from))
                    : "not signed; no policy requires signatures";
    return t;
  }
  if (!has_keys) {
    t.note = "signed, not verified: no policy names the allowed keys";
    return t;
  }
  Result<Signer> who = Diagnostic::Error("trust.unsupported", "");
  if (StartsWith(commit.signature, "-----BEGIN SSH SIGNATURE-----")) {
    if (policy->allowed_signers.empty())
      who = Diagnostic::Error("trust.unknown-key",
                              fmt::format("commit {} has an SSH signature, but {} allows no SSH "
                                          "key (no allowed_signers)",
                                          c, PolicyAt(base, base_from)));
    else
      who = verifier.VerifySsh(commit.signature, commit.signed_data, policy->allowed_signers_text);
  } else if (StartsWith(commit.signature, "-----BEGIN PGP SIGNATURE-----")) {
    if (policy->gpg_keyring.empty())
      who = Diagnostic::Error("trust.unknown-key",
                              fmt::format("commit {} has an OpenPGP signature, but {} allows no "
                                          "OpenPGP key (no gpg_keyring)",
                                          c, PolicyAt(base, base_from)));
    else
      who = verifier.VerifyOpenPgp(commit.signature, commit.signed_data, policy->gpg_keyring_data);
  } else {
    who = Diagnostic::Error("trust.unsupported",
                            fmt::format("commit {} has a signature plumb cannot check (neither SSH "
                                        "nor OpenPGP: X.509?)", c));
  }
  if (who) {
    t.signer = *who;
    t.note = fmt::format("signed by {}, allowed by {}", who->ToString(), PolicyAt(base, base_from));
    return t;
  }
  Diagnostic d = who.error();
  if (!t.required) {   // checked for the record only: a bad signature is noted, not fatal
    t.note = fmt::format("signature not verified ({}); {} does not require signatures", d.message,
                         PolicyAt(base, base_from));
    return t;
  }
  // Name the commit and the rule in the message, whatever the tool said.
  if (d.message.find(c) == std::string::npos)
    d.message = fmt::format("commit {}: {}", c, d.message);
  d.message += fmt::format(" ({} requires signed commits; allowed: {})", PolicyAt(base, base_from),
                           KeysOf(*policy));
  d.key_path = inventory::kPolicyFile;
  if (d.hint.empty())
    d.hint = d.code == "trust.bad-signature"
                 ? "the commit does not match its signature: it was altered after signing; do not "
                   "apply it"
                 : "sign with a key the base's policy allows, or add the key there in a commit "
                   "signed by an allowed key";
  return d;
}

Result<CommitTrust> CheckCommitTrust(const std::string& repo, const std::string& commit,
                                     const std::string& trust_from, SignatureVerifier& verifier) {
  auto info = inventory::ReadCommitInfo(repo, commit);
  if (!info) return info.error();
  std::string base, base_from;
  if (!trust_from.empty()) {
    auto b = inventory::ResolveCommit(repo, trust_from);
    if (!b) return b.error();
    if (*b == info->commit)
      return Diagnostic::Error(
          "trust.self",
          fmt::format("--trust-policy-from {} names the commit being checked ({}): a commit "
                      "cannot vouch for itself", trust_from, Short(info->commit)),
          {}, {}, "name the trusted state before it: the target branch before the merge, a "
                  "protected tag, the commit last applied");
    base = *b;
    base_from = "--trust-policy-from " + trust_from;
  } else if (!info->parents.empty()) {
    base = info->parents.front();
    base_from = "first parent";
  }
  std::optional<inventory::TrustPolicy> policy;
  if (!base.empty()) {
    auto tree = inventory::GitTreeSource::Open(repo, base);
    if (!tree) {
      // The usual cause: a shallow clone that lacks the parent (CI checkouts default to depth 1).
      Diagnostic d = tree.error();
      d.message = fmt::format("cannot read the trusted base {} ({}) of commit {}: {}", Short(base),
                              base_from, Short(info->commit), d.message);
      d.hint = "fetch the history (actions/checkout fetch-depth: 0, GIT_DEPTH: 0), or name a "
               "base the clone has with --trust-policy-from";
      return d;
    }
    inventory::LoadedPolicy lp = inventory::LoadTrustPolicy(**tree);
    if (!lp.ok())
      return Diagnostic::Error("trust.policy",
                               fmt::format("the policy at {} ({}) does not load:\n{}", Short(base),
                                           base_from, lp.diags.ToText()),
                               {}, inventory::kPolicyFile,
                               "fix policy.yaml in a commit signed by an allowed key");
    policy = std::move(lp.policy);
  } else {
    // A root commit: nothing before it can vouch for it. Its own policy is no authority, but
    // if it asks for signatures the operator meant them, so it is refused rather than waved on.
    auto tree = inventory::GitTreeSource::Open(repo, info->commit);
    if (!tree) return tree.error();
    inventory::LoadedPolicy own = inventory::LoadTrustPolicy(**tree);
    if (!own.ok() || (own.policy && own.policy->require_signed_commits))
      return Diagnostic::Error(
          "trust.no-base",
          fmt::format("commit {} has no parent to read the signing policy from, and its own {} "
                      "asks for signed commits: it cannot vouch for itself",
                      Short(info->commit), inventory::kPolicyFile),
          {}, {}, "name a trusted base holding the policy: --trust-policy-from REF");
  }
  return JudgeCommit(*info, base, base_from, policy, verifier);
}

}  // namespace plumb::plans
