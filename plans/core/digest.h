#pragma once
/// SHA-256 digests of canonical JSON: the facts digest of a node (stale-plan check) and the
/// digest of a whole plan (tamper check). Canonical = nlohmann's dump() of an object, whose
/// keys are sorted, with no whitespace.
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace plumb::plans {

/// Lower-case hex SHA-256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);
/// "sha256:<hex>" of the canonical dump of `value`.
std::string JsonDigest(const nlohmann::json& value);
/// The canonical dump JsonDigest hashes (compact, keys sorted, invalid UTF-8 replaced).
std::string CanonicalJson(const nlohmann::json& value);

/// SHA-256 over bytes that arrive in pieces (a document too big to assemble first).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(std::string_view bytes);
  /// Lower-case hex of everything updated so far. Call once.
  std::string Hex();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

}  // namespace plumb::plans
