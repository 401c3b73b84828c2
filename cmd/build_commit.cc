// The commit this binary was built from (cmake/CommitId.cmake writes plumb_commit.h on every
// build). A file of its own, outside the unity batches: a new commit recompiles only this.
#include "cmd/build_commit.h"

#include "plumb_commit.h"

namespace plumb::cmd {

const char* BuildCommit() { return PLUMB_COMMIT; }

}  // namespace plumb::cmd
