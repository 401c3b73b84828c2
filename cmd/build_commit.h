#pragma once

namespace plumb::cmd {

/// The git commit plumb was built from ("<sha>", "<sha>-dirty", or "unknown").
const char* BuildCommit();

}  // namespace plumb::cmd
