#include "schemas/schema_compose.h"

#include <fmt/format.h>

namespace plumb::schemas {

namespace {

using ojson = nlohmann::ordered_json;

// A fragment's entry that only adds members to a group the base (or an earlier fragment)
// defines: {"properties": {...}} and nothing else.
bool ExtendsGroup(const ojson& have, const ojson& add) {
  return add.is_object() && add.size() == 1 && add.contains("properties") &&
         add["properties"].is_object() && have.is_object() && have.contains("properties") &&
         have["properties"].is_object();
}

// Merges the named schemas `add` (a "properties" or "definitions" map) into `into`, at JSON
// pointer `at`. A name defined already is the error, unless the fragment only adds members to
// that group.
Status MergeNamed(ojson& into, const ojson& add, const std::string& at, const std::string& from) {
  for (auto it = add.begin(); it != add.end(); ++it) {
    const std::string here = at + "/" + it.key();
    auto have = into.find(it.key());
    if (have == into.end()) {
      into[it.key()] = it.value();
      continue;
    }
    if (!ExtendsGroup(*have, *it))
      return Diagnostic::Error("schema.compose",
                               fmt::format("{}: {} is already defined (by the base or another module)",
                                           from, here),
                               {}, here, "each module adds its own keys only: rename it, or keep it in one module");
    if (Status s = MergeNamed((*have)["properties"], (*it)["properties"], here + "/properties", from); !s)
      return s;
  }
  return OkStatus();
}

}  // namespace

Result<ojson> ComposeSchema(ojson base, const std::vector<SchemaFragment>& fragments) {
  if (!base.is_object()) return Diagnostic::Error("schema.compose", "the base schema is not a JSON object");
  for (const char* key : {"definitions", "properties"})
    if (!base.contains(key)) base[key] = ojson::object();
  for (const SchemaFragment& f : fragments) {
    if (!f.doc.is_object())
      return Diagnostic::Error("schema.compose", f.name + ": not a JSON object");
    for (auto it = f.doc.begin(); it != f.doc.end(); ++it) {
      if (it.key() == "$comment") continue;
      if (it.key() != "definitions" && it.key() != "properties")
        return Diagnostic::Error("schema.compose",
                                 fmt::format("{}: /{}: a module's schema adds only definitions and properties",
                                             f.name, it.key()));
      if (!it->is_object())
        return Diagnostic::Error("schema.compose", fmt::format("{}: /{} is not an object", f.name, it.key()));
      if (!base[it.key()].is_object())
        return Diagnostic::Error("schema.compose", fmt::format("the base's /{} is not an object", it.key()));
      if (Status s = MergeNamed(base[it.key()], *it, "/" + it.key(), f.name); !s) return s.error();
    }
  }
  return base;
}

}  // namespace plumb::schemas
