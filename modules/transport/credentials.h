#pragma once
/// BMC credentials. The inventory holds only a REFERENCE ("env:VAR" or "file:/path"); the secret
/// is read at run time and lives in a Secret, which has no printing operator. No message built
/// here or anywhere else contains a password or a session token.
#include <string>
#include <string_view>

#include "schemas/result.h"

namespace plumb::transport {

/// A string that must never be printed. Read it only where it goes on the wire.
class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) {}
  const std::string& Reveal() const { return value_; }
  bool empty() const { return value_.empty(); }

 private:
  std::string value_;
};

struct Credentials {
  std::string user;
  Secret password;
};

/// Reads "user:password" from `reference`:
///   "env:VAR"    the environment variable VAR;
///   "file:/path" the file's first line; refused when the file is readable or writable by group
///                or others (chmod 600), like ssh does for private keys.
/// Errors (code "bmc.credentials") name the reference, never the content.
Result<Credentials> LoadCredentials(std::string_view reference);

}  // namespace plumb::transport
