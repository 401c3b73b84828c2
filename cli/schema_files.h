#pragma once
/// `plumb schemas`: the JSON Schemas and rules compiled into plumb (schemas/embedded.h), listed
/// or written out for editors and CI. Tested in tests/cli/schema_files_test.cc.
#include <functional>
#include <string>
#include <vector>

#include "schemas/embedded.h"
#include "schemas/result.h"

namespace plumb::cli {

/// Their names, one a line ("stack.schema.json", "rules/compat.yaml").
std::string EmbeddedFileList(const std::vector<schemas::EmbeddedFile>& files);

/// Writes each of `files` under `dir` (its folders made) with `write`, calling `wrote` with the
/// path after each; the first that cannot be written ends it with an error naming it.
using WriteFile = std::function<Status(const std::string& path, const std::string& text)>;
Status WriteEmbeddedFiles(const std::vector<schemas::EmbeddedFile>& files, const std::string& dir,
                          const WriteFile& write,
                          const std::function<void(const std::string& path)>& wrote);

}  // namespace plumb::cli
