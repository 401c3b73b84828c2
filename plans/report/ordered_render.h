#pragma once
/// Rendering many independent pieces (one per node) on all cores while keeping their order:
/// a 10,000-node report is 45-145 MB of text, and formatting it one node after another on one
/// core took longer than building the report.
#include <cstddef>
#include <functional>
#include <ostream>
#include <string>

namespace plumb::plans::report {

/// Calls `render(i, piece)` for every i in [0, count) (on any thread; `piece` starts empty) and
/// writes the pieces to `out` in order of i. At most a few chunks per core are held at once.
void WriteOrdered(size_t count, const std::function<void(size_t i, std::string& piece)>& render,
                  std::ostream& out);

}  // namespace plumb::plans::report
