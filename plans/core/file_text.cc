#include "plans/core/file_text.h"

#include <fstream>
#include <sstream>

namespace plumb::plans {

std::optional<std::string> ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return std::move(ss).str();
}

}  // namespace plumb::plans
