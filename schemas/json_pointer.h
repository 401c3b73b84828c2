#pragma once
/// JSON pointers (RFC 6901) as plumb uses them: the address of a value in a loaded document,
/// the key of the origin maps, and the bridge to the user's "key path" ("nodes[3].address").
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace plumb::schemas {

/// RFC 6901 escaping of one reference token: '~' -> "~0", '/' -> "~1" ("a/b" -> "a~1b"). The
/// one place plumb escapes a token: every pointer it builds from a key goes through here.
std::string PointerToken(std::string_view token);

/// `pointer` + "/" + `token`, escaping '~' and '/' in the token.
std::string PointerAppend(const std::string& pointer, const std::string& token);
std::string PointerAppend(const std::string& pointer, size_t index);

/// The unescaped tokens of `pointer` ("/a~1b/0" -> {"a/b", "0"}).
std::vector<std::string> PointerTokens(const std::string& pointer);

/// The key path users read: "/nodes/3/address" in a document -> "nodes[3].address"; tokens
/// that index arrays in `doc` print as [n]. An empty pointer is "" (the whole file).
std::string KeyPath(const std::string& pointer, const nlohmann::json& doc);

/// The value at `pointer` in `doc`, or nullptr when there is none (never throws).
const nlohmann::json* ValueAt(const nlohmann::json& doc, const std::string& pointer);

/// `object[key]` when `object` is an object and that member a string, else "" (never throws).
std::string StringMember(const nlohmann::json& object, std::string_view key);

/// True if `pointer` is `prefix` or lies below it ("/a/b" is under "/a", "/ab" is not).
bool PointerUnder(std::string_view pointer, std::string_view prefix);

/// A desired-state key as users write it (the cluster repo's YAML, waivers): the pointer's
/// tokens unescaped and joined by dots. "/nvidia/driver" -> "nvidia.driver",
/// "/packages/a~1b" -> "packages.a/b"; "" -> "".
std::string PointerToKey(std::string_view pointer);

}  // namespace plumb::schemas
