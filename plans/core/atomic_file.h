#pragma once
/// The one way plumb writes an output file (a plan, a report, a facts snapshot, the schemas):
/// into a private temp file next to it (mkstemp: two runs writing the same path never share
/// one), renamed over it only once everything is written, so a reader sees the old file or the
/// new one and never half of one. The temp file is removed on any failure; the result has the
/// umask's mode like any other output.
#include <functional>
#include <ostream>
#include <string>

#include "schemas/result.h"

namespace plumb::plans {

Status WriteFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                           const std::string& code = "output.write");

}  // namespace plumb::plans
