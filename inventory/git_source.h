#pragma once
/// The cluster repo at a git ref, read with libgit2: ref -> commit -> tree -> blobs, no checkout.
/// libgit2's headers stay in git_source.cc.
#include <memory>
#include <string>
#include <vector>

#include "inventory/file_source.h"
#include "schemas/result.h"

namespace plumb::inventory {

/// Files of one commit's tree.
class GitTreeSource : public FileSource {
 public:
  /// Opens the repository at `repo` (the directory itself, no search upwards) and resolves `ref`:
  /// a branch, tag, short or full SHA, HEAD, or any git revision ("HEAD~1"). Errors (codes):
  /// "source.not-a-repo", "source.empty-repo", "source.unknown-ref" (hint: nearby refs),
  /// "source.ambiguous-ref", "source.git".
  static Result<std::unique_ptr<GitTreeSource>> Open(const std::string& repo, const std::string& ref);
  ~GitTreeSource() override;

  /// The full 40-hex SHA of the commit `ref` resolved to.
  const std::string& commit() const { return commit_; }

  Result<std::optional<std::string>> Read(const std::string& path) const override;
  Result<std::vector<std::string>> List(const std::string& dir) const override;

 private:
  struct Impl;
  explicit GitTreeSource(std::unique_ptr<Impl> impl, std::string commit);
  std::unique_ptr<Impl> impl_;
  std::string commit_;
};

/// The full SHA that `ref` names in the repository at `repo` (errors as GitTreeSource::Open).
Result<std::string> ResolveCommit(const std::string& repo, const std::string& ref);

/// The libgit2 this process runs with ("1.5.1"), for `plumb version`.
std::string Libgit2Version();

/// One commit's metadata and signature, as git stores them (for the signed-commit policy and
/// the audit record). The signature is git's: an SSH (`-----BEGIN SSH SIGNATURE-----`) or
/// OpenPGP (`-----BEGIN PGP SIGNATURE-----`) armour over `signed_data`, the commit object
/// without its `gpgsig` header, read with git_commit_extract_signature.
struct CommitInfo {
  std::string commit;                 ///< full SHA
  std::vector<std::string> parents;   ///< full SHAs, first parent first
  std::string author, committer;      ///< "Name <email>"
  std::string author_time, commit_time;   ///< RFC 3339 UTC
  std::string summary;                ///< the message's first line
  std::string signature;              ///< "" when the commit is not signed
  std::string signed_data;            ///< what the signature signs ("" when unsigned)
};

/// The commit `ref` names in `repo` (errors as GitTreeSource::Open; "source.git" when the
/// commit cannot be read).
Result<CommitInfo> ReadCommitInfo(const std::string& repo, const std::string& ref);

/// True if `repo` is the top of a git repository (has a .git, or is a bare repository).
bool IsGitRepo(const std::string& repo);

}  // namespace plumb::inventory
