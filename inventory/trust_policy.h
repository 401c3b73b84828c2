#pragma once
/// The cluster repo's signed-commit policy (policy.yaml) as one commit's tree states it:
///
///   require_signed_commits: true
///   allowed_signers: allowed_signers       # SSH keys: ssh-keygen's ALLOWED SIGNERS format
///   gpg_keyring: keys/allowed.gpg          # OpenPGP public keys (binary or armoured)
///
/// Which commit's policy judges a commit is plans/trust/commit_trust.h's rule (the trusted base,
/// never the commit itself); this only reads one. Paths are relative to the repo root and read
/// from the same tree as the policy, so a base's keys judge, not the candidate's.
#include <optional>
#include <string>

#include "inventory/file_source.h"
#include "schemas/diagnostics.h"

namespace plumb::inventory {

inline constexpr const char* kPolicyFile = "policy.yaml";

struct TrustPolicy {
  bool require_signed_commits = false;
  std::string allowed_signers;        ///< repo path, "" = no SSH keys
  std::string gpg_keyring;            ///< repo path, "" = no OpenPGP keys
  std::string allowed_signers_text;   ///< that file's contents in the same tree
  std::string gpg_keyring_data;       ///< that file's bytes in the same tree
};

struct LoadedPolicy {
  std::optional<TrustPolicy> policy;   ///< nullopt: no policy.yaml in the tree
  Diagnostics diags;                   ///< located errors (schema, a missing keys file...)
  bool ok() const { return !diags.HasErrors(); }
};

/// Reads and validates policy.yaml (schemas/policy.schema.json) and the key files it names
/// from `files`. Errors: schema.*, "policy.missing-file" (a named file is not in the tree),
/// "policy.no-keys" (signatures required but no key file named), "policy.path" (a path that
/// leaves the repo).
LoadedPolicy LoadTrustPolicy(const FileSource& files);

}  // namespace plumb::inventory
