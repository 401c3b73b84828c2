#pragma once
/// What `plumb validate` says of a cluster repo as loaded: every diagnostic, then "valid: ..."
/// with what it holds, or "invalid: N errors, M warnings"; or all of it as one JSON object.
#include <ostream>
#include <string>

#include "inventory/load.h"

namespace plumb::plans::report {

/// --format json: the object on `out`. text: the diagnostics and an invalid verdict on `err`, a
/// valid one on `out`. Returns the "validate" exit code.
int ShowValidation(const inventory::LoadedCluster& lc, const std::string& format, std::ostream& out,
                   std::ostream& err);

}  // namespace plumb::plans::report
