#pragma once
#include <string>

namespace plumb::cmd {

// Which allocator this binary was built with ("mimalloc 2.0.9" or "system malloc"), for
// `plumb version`: benchmark numbers depend on it.
std::string AllocatorName();

}  // namespace plumb::cmd
