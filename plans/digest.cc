#include "plans/digest.h"

#include <openssl/evp.h>

#include <array>
#include <cstdio>

namespace plumb::plans {

std::string Sha256Hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md.data(), &len, EVP_sha256(), nullptr);
  std::string hex;
  hex.reserve(len * 2);
  char buf[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", md[i]);
    hex += buf;
  }
  return hex;
}

std::string JsonDigest(const nlohmann::json& value) {
  // dump() sorts object keys (nlohmann::json uses std::map), so equal values hash equally.
  return "sha256:" + Sha256Hex(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace plumb::plans
