#include "plans/watch/desired_source.h"

namespace plumb::plans::watch {

Result<std::string> GitDesiredSource::Resolve() { return inventory::ResolveCommit(repo_, ref_); }

std::unique_ptr<inventory::LoadedCluster> GitDesiredSource::Load(const std::string& commit) {
  inventory::LoadOptions opt = base_;
  opt.ref = commit;
  auto loaded = std::make_unique<inventory::LoadedCluster>(inventory::LoadCluster(opt));
  // The reports name the ref the user watches; the commit is the one read.
  loaded->cluster.source.ref = ref_;
  return loaded;
}

}  // namespace plumb::plans::watch
