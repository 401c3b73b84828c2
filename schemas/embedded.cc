#include "schemas/embedded.h"

#include <algorithm>

namespace plumb::schemas {

std::optional<std::string_view> FindEmbedded(std::string_view name) {
  for (const auto& f : EmbeddedFiles()) {
    if (f.name == name) return f.contents;
  }
  return std::nullopt;
}

}  // namespace plumb::schemas
