#pragma once
/// SHA-256 digests of canonical JSON: the facts digest of a node (stale-plan check) and the
/// digest of a whole plan (tamper check). Canonical = nlohmann's dump() of an object, whose
/// keys are sorted, with no whitespace.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace plumb::plans {

/// Lower-case hex SHA-256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);
/// "sha256:<hex>" of the canonical dump of `value`.
std::string JsonDigest(const nlohmann::json& value);

}  // namespace plumb::plans
