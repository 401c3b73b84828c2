#pragma once
/// The cluster repo as cmd/ loads it: plans/core/repo_load.h, by its cmd/ names.
#include "plans/core/repo_load.h"

namespace plumb::cmd {

using plans::DiscoverRepo;
using plans::LoadRepo;
using plans::RepoLoadFailure;
using plans::RepoLoadOptions;
using plans::RepoPath;

}  // namespace plumb::cmd
