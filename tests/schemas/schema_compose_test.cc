// The stack schema is composed from schemas/stack.base.json and each module's
// modules/<m>/desired.schema.json (schemas/schema_compose.h).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "schemas/embedded.h"
#include "schemas/schema_compose.h"

using nlohmann::ordered_json;
using namespace plumb::schemas;

namespace {

ordered_json Base() {
  return ordered_json::parse(R"({"type": "object", "definitions": {},
    "properties": {"group": {"type": "object", "additionalProperties": false, "properties": {}}}})");
}

}  // namespace

TEST_CASE("schema compose: fragments add top-level keys, group members and definitions") {
  auto composed = ComposeSchema(Base(), {
      {"modules/a/desired.schema.json", ordered_json::parse(R"({"$comment": "for people",
          "definitions": {"a_value": {"type": "string"}},
          "properties": {"a": {"$ref": "#/definitions/a_value"}}})")},
      {"modules/b/desired.schema.json",
       ordered_json::parse(R"({"properties": {"group": {"properties": {"b": {"type": "integer"}}}}})")},
      {"modules/c/desired.schema.json",
       ordered_json::parse(R"({"properties": {"group": {"properties": {"c": {"type": "boolean"}}}}})")},
  });
  REQUIRE_MESSAGE(composed.ok(), composed.error().message);
  const ordered_json& s = *composed;
  CHECK(s["definitions"]["a_value"]["type"] == "string");
  CHECK(s["properties"]["a"]["$ref"] == "#/definitions/a_value");
  CHECK(s["properties"]["group"]["properties"]["b"]["type"] == "integer");
  CHECK(s["properties"]["group"]["properties"]["c"]["type"] == "boolean");
  CHECK(s["properties"]["group"]["additionalProperties"] == false);   // the base's, kept
  CHECK_FALSE(s.contains("$comment"));                                // a fragment's is dropped
}

TEST_CASE("schema compose: a key two modules define is an error naming the fragment and pointer") {
  auto twice = ComposeSchema(Base(), {
      {"modules/a/desired.schema.json", ordered_json::parse(R"({"properties": {"x": {"type": "string"}}})")},
      {"modules/b/desired.schema.json", ordered_json::parse(R"({"properties": {"x": {"type": "string"}}})")},
  });
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.error().code == "schema.compose");
  CHECK(twice.error().message.find("modules/b/desired.schema.json: /properties/x is already defined") !=
        std::string::npos);

  // Redefining what the base says of a group is an error too, not a silent override.
  auto retype = ComposeSchema(Base(), {{"modules/c/desired.schema.json",
      ordered_json::parse(R"({"properties": {"group": {"additionalProperties": true}}})")}});
  REQUIRE_FALSE(retype.ok());
  CHECK(retype.error().key_path == "/properties/group");
  // Nor may a module define a member another module's part has already given the group.
  auto member = ComposeSchema(Base(), {
      {"modules/a/desired.schema.json",
       ordered_json::parse(R"({"properties": {"group": {"properties": {"m": {"type": "string"}}}}})")},
      {"modules/b/desired.schema.json",
       ordered_json::parse(R"({"properties": {"group": {"properties": {"m": {"type": "integer"}}}}})")},
  });
  REQUIRE_FALSE(member.ok());
  CHECK(member.error().key_path == "/properties/group/properties/m");

  auto definition = ComposeSchema(Base(), {
      {"modules/a/desired.schema.json", ordered_json::parse(R"({"definitions": {"v": {"type": "string"}}})")},
      {"modules/b/desired.schema.json", ordered_json::parse(R"({"definitions": {"v": {"type": "string"}}})")},
  });
  REQUIRE_FALSE(definition.ok());
  CHECK(definition.error().key_path == "/definitions/v");

  // A fragment adds definitions and properties only: nothing of the top level's own.
  auto top = ComposeSchema(Base(), {{"modules/d/desired.schema.json",
      ordered_json::parse(R"({"additionalProperties": true})")}});
  REQUIRE_FALSE(top.ok());
  CHECK(top.error().message.find("/additionalProperties") != std::string::npos);
}

TEST_CASE("schema compose: the embedded stack schema is composed; base and fragments are not listed") {
  auto stack = FindEmbedded("stack.schema.json");
  REQUIRE(stack.has_value());
  auto s = nlohmann::json::parse(*stack);
  // Keys from three different module folders, and the base's top level.
  CHECK(s["properties"]["sysctl"]["additionalProperties"]["$ref"] == "#/definitions/sysctl_value");
  CHECK(s["definitions"].contains("sysctl_key"));
  CHECK(s["properties"]["nvidia"]["properties"].contains("cuda"));
  CHECK(s["properties"]["nvidia"]["properties"].contains("driver"));
  CHECK(s["properties"]["health"]["properties"].contains("nccl_bw"));
  CHECK(s["additionalProperties"] == false);
  int fragments = 0;
  for (const EmbeddedFile& f : EmbeddedSources())
    if (std::string_view(f.name).ends_with("/desired.schema.json")) ++fragments;
  CHECK(fragments > 10);
  for (const EmbeddedFile& f : EmbeddedFiles()) {
    CHECK(f.name != "stack.base.json");
    CHECK_FALSE(std::string_view(f.name).starts_with("modules/"));
  }
  // A module's facts schema comes from its folder under the name it always had.
  CHECK(FindEmbedded("facts/sysctl.schema.json").has_value());
}
