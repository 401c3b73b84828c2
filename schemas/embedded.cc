#include "schemas/embedded.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "schemas/schema_compose.h"

namespace plumb::schemas {

namespace {

bool IsFragment(std::string_view name) {
  return name.starts_with(kFragmentPrefix) && name.ends_with(kFragmentSuffix);
}

// The stack schema: the base with every module's fragment, in folder order (the sources are
// sorted). Composed once; an error is a defect of the build (the unit tests compose it too),
// reported on stderr, and leaves plumb without a stack schema rather than with a wrong one.
std::optional<std::string> ComposedStack() {
  std::optional<std::string_view> base;
  std::vector<SchemaFragment> fragments;
  for (const EmbeddedFile& f : EmbeddedSources()) {
    if (f.name == kStackBaseName) base = f.contents;
    if (!IsFragment(f.name)) continue;
    auto doc = nlohmann::ordered_json::parse(f.contents, nullptr, /*allow_exceptions=*/false);
    fragments.push_back({std::string(f.name), std::move(doc)});
  }
  if (!base) return std::nullopt;
  auto composed = ComposeSchema(nlohmann::ordered_json::parse(*base, nullptr, false), fragments);
  if (!composed) {
    std::fprintf(stderr, "plumb: internal error: %s\n", composed.error().message.c_str());
    return std::nullopt;
  }
  return composed->dump(2) + "\n";
}

}  // namespace

const std::vector<EmbeddedFile>& EmbeddedFiles() {
  static const std::string* stack = [] {
    auto s = ComposedStack();
    return s ? new std::string(std::move(*s)) : nullptr;   // lives as long as the program
  }();
  static const std::vector<EmbeddedFile> files = [] {
    std::vector<EmbeddedFile> out;
    for (const EmbeddedFile& f : EmbeddedSources())
      if (f.name != kStackBaseName && !IsFragment(f.name)) out.push_back(f);
    if (stack) out.push_back({kStackSchemaName, *stack});
    std::sort(out.begin(), out.end(),
              [](const EmbeddedFile& a, const EmbeddedFile& b) { return a.name < b.name; });
    return out;
  }();
  return files;
}

std::optional<std::string_view> FindEmbedded(std::string_view name) {
  for (const auto& f : EmbeddedFiles()) {
    if (f.name == name) return f.contents;
  }
  return std::nullopt;
}

}  // namespace plumb::schemas
