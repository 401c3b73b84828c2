// The progress line of a read on a terminal (plans/observe/node_progress.h).
#include "plans/observe/node_progress.h"

#include <fmt/format.h>

namespace plumb::plans {

void NodeProgressLine::OnNodeDone(const NodeObservation& n, size_t done, size_t total) {
  if (!n.reachable) ++failed_;
  std::fprintf(out_, "\r%s: %zu/%zu nodes%s", label_.c_str(), done, total,
               failed_ ? fmt::format(" ({} unreadable)", failed_).c_str() : "");
  if (done == total) std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
}

}  // namespace plumb::plans
