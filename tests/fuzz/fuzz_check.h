#pragma once
// What every fuzz target asserts beyond "does not crash": a parser either gives a value or a
// Diagnostic coded "probe.<module>" with a message; nothing throws.
#include <cstdlib>
#include <string_view>

#include "schemas/result.h"

namespace plumb::fuzz {

template <class T>
void CheckParse(const Result<T>& r) {
  if (r.ok()) return;
  const auto& d = r.error();
  if (std::string_view(d.code).substr(0, 6) != "probe." || d.message.empty()) std::abort();
}

}  // namespace plumb::fuzz
