#pragma once
// What every fuzz target asserts beyond "does not crash": a parser either gives a value or a
// Diagnostic coded "probe.<module>" with a message; nothing throws. Facts read part by part
// (modules/part_facts.h) are an object whose every part error is such a Diagnostic.
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "modules/module.h"
#include "schemas/result.h"

namespace plumb::fuzz {

template <class T>
void CheckParse(const Result<T>& r) {
  if (r.ok()) return;
  const auto& d = r.error();
  if (std::string_view(d.code).substr(0, 6) != "probe." || d.message.empty()) std::abort();
}

inline void CheckParse(const nlohmann::json& facts) {
  if (!facts.is_object()) std::abort();
  for (const Diagnostic& d : modules::ModuleProblems(Result<modules::Facts>(facts)))
    if (std::string_view(d.code).substr(0, 6) != "probe." || d.message.empty()) std::abort();
}

}  // namespace plumb::fuzz
