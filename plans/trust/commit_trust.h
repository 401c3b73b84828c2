#pragma once
/// The signed-commit rule: when the cluster's policy (policy.yaml, inventory/trust_policy.h)
/// asks for it, plan and apply refuse a commit that is not signed by an allowed key, before any
/// node is read or touched.
///
/// Which policy judges a commit C: the one in C's *trusted base*, never C's own - a commit
/// cannot vouch for itself, so an unsigned commit that deletes the policy or adds its author's
/// key to allowed_signers is judged by the policy before it. The base is the commit
/// `--trust-policy-from REF` names (a protected branch or tag, the commit last applied: an
/// anchor the attacker cannot move), else C's first parent. REF naming C itself is refused. A
/// root commit has no first parent: it is refused when its own tree asks for signatures (no
/// one can vouch for it), and otherwise judged by no policy.
///
/// What a verified signature proves: C (its tree, parents, author, committer and message) was
/// signed by the holder of a key the base allows. It proves nothing about C's other ancestors,
/// nor that the base is the one meant: with the first-parent default, a branch someone can
/// push two unsigned commits to (the first removing the policy) is judged by the first; pin
/// the base with --trust-policy-from to close that.
#include <optional>
#include <string>
#include <string_view>

#include "inventory/git_source.h"
#include "inventory/trust_policy.h"
#include "schemas/result.h"

namespace plumb::plans {

/// Who signed, as the verifying tool reported it.
struct Signer {
  std::string format;     ///< "ssh" or "openpgp"
  std::string identity;   ///< ssh: the allowed-signers principal; openpgp: the key's user id
  std::string key;        ///< ssh: "SHA256:..." key fingerprint; openpgp: the key fingerprint
  /// "ssh alice@example.com (SHA256:...)".
  std::string ToString() const;
};

/// Checks one signature with a real tool (plans/trust/signature_tools.h) or a fake (tests). Errors:
/// "trust.unknown-key" (well formed, but no allowed key made it), "trust.bad-signature" (the
/// signature does not match the data: a tampered commit), "trust.tool" (the tool failed).
class SignatureVerifier {
 public:
  virtual ~SignatureVerifier() = default;
  /// An SSH signature (git's gpg.format=ssh) over `data`, against an allowed-signers file.
  virtual Result<Signer> VerifySsh(std::string_view signature, std::string_view data,
                                   std::string_view allowed_signers) = 0;
  /// An OpenPGP signature over `data`, against a keyring of allowed public keys.
  virtual Result<Signer> VerifyOpenPgp(std::string_view signature, std::string_view data,
                                       std::string_view keyring) = 0;
};

/// What was found about one commit, for the output and the run record.
struct CommitTrust {
  std::string commit;
  inventory::CommitInfo info;   ///< author, committer...: the audit record's
  std::string base;           ///< the commit the policy was read from; "" when none
  std::string base_from;      ///< "first parent" or "--trust-policy-from REF"
  bool required = false;      ///< the base's policy requires signed commits
  std::optional<Signer> signer;   ///< a signature checked good against the base's keys
  std::string note;           ///< one line: "signed by ssh alice (SHA256:..)", "not signed; ..."
};

/// The rule over what was read: `commit`, the policy of its base (`base` "" and `policy`
/// nullopt when there is none). A signature is checked whenever the base has keys; it must be
/// good when the policy requires it. Refusals (codes): "trust.unsigned", "trust.unknown-key",
/// "trust.bad-signature", "trust.unsupported" (an X.509 signature), "trust.tool"; each names
/// the commit, the base and the policy's keys.
Result<CommitTrust> JudgeCommit(const inventory::CommitInfo& commit, const std::string& base,
                                const std::string& base_from,
                                const std::optional<inventory::TrustPolicy>& policy,
                                SignatureVerifier& verifier);

/// Reads `commit` (a ref) of the repo at `repo`, finds its base (`trust_from`: a ref, "" = the
/// first parent), loads the base's policy and judges the commit. Also "trust.self" (the base
/// is the commit), "trust.no-base" (a root commit whose own tree asks for signatures) and
/// "trust.policy" (the base's policy does not load: the errors, located).
Result<CommitTrust> CheckCommitTrust(const std::string& repo, const std::string& commit,
                                     const std::string& trust_from, SignatureVerifier& verifier);

}  // namespace plumb::plans
