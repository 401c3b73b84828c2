#pragma once
/// Where the watch gets the desired state: the cluster repo at --ref, asked again whenever the
/// ref may have moved (`--ref origin/main` after a fetch). Behind an interface so the watch loop
/// is tested with desired states made in memory.
#include <memory>
#include <string>

#include "inventory/load.h"
#include "schemas/result.h"

namespace plumb::plans::watch {

class DesiredSource {
 public:
  virtual ~DesiredSource() = default;
  /// The full commit SHA the ref names now. Cheap (no file is read): asked every few seconds.
  virtual Result<std::string> Resolve() = 0;
  /// The cluster repo at `commit` (a full SHA), validated and merged, problems in its diags.
  virtual std::unique_ptr<inventory::LoadedCluster> Load(const std::string& commit) = 0;
  /// What the user asked for ("origin/main"), for messages.
  virtual std::string ref() const = 0;
};

/// The cluster repo on disk, read with libgit2 at the commit the ref names (no checkout). The
/// ref is resolved once per Load's caller and the files are read at that very commit, so a ref
/// that moves in between never mixes two commits. `base` is how cmd/ loads a repo
/// (plans::RepoLoadOptions: repo, ref, the registry's checked keys); Load reads it at the commit.
class GitDesiredSource final : public DesiredSource {
 public:
  explicit GitDesiredSource(inventory::LoadOptions base)
      : base_(std::move(base)), repo_(base_.repo), ref_(base_.ref) {}
  Result<std::string> Resolve() override;
  std::unique_ptr<inventory::LoadedCluster> Load(const std::string& commit) override;
  std::string ref() const override { return ref_; }

 private:
  inventory::LoadOptions base_;
  std::string repo_, ref_;
};

}  // namespace plumb::plans::watch
