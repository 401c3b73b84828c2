// The process-wide allocator. plumb's read paths (plan, drift over 10k-node snapshots) build
// millions of small JSON nodes on several threads; glibc's malloc spent ~30% of their CPU in
// malloc/free/consolidate. mimalloc (Debian's libmimalloc) halves that. Linking libmimalloc
// replaces malloc for the whole process; including its new/delete header here gives C++
// allocations a direct path and a hard reference, so the linker can never drop the library.
#include "cmd/allocator.h"

#ifdef PLUMB_WITH_MIMALLOC
#include <mimalloc-new-delete.h>
#include <mimalloc.h>
#include <fmt/format.h>
#endif

namespace plumb::cmd {

std::string AllocatorName() {
#ifdef PLUMB_WITH_MIMALLOC
  const int v = mi_version();  // e.g. 209 for 2.0.9
  return fmt::format("mimalloc {}.{}.{}", v / 100, v / 10 % 10, v % 10);
#else
  return "system malloc";
#endif
}

}  // namespace plumb::cmd
