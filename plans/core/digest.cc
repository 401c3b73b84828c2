#include "plans/core/digest.h"

#include <openssl/evp.h>

#include <array>

namespace plumb::plans {

namespace {

std::string ToHex(const unsigned char* md, unsigned int len) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[md[i] >> 4];
    hex += kHex[md[i] & 0xf];
  }
  return hex;
}

}  // namespace

std::string Sha256Hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md.data(), &len, EVP_sha256(), nullptr);
  return ToHex(md.data(), len);
}

std::string CanonicalJson(const nlohmann::json& value) {
  // dump() sorts object keys (nlohmann::json uses std::map), so equal values dump equally.
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JsonDigest(const nlohmann::json& value) {
  return "sha256:" + Sha256Hex(CanonicalJson(value));
}

struct Sha256::Ctx {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Ctx() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) {
  EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr);
}

Sha256::~Sha256() = default;

void Sha256::Update(std::string_view bytes) { EVP_DigestUpdate(ctx_->md, bytes.data(), bytes.size()); }

std::string Sha256::Hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->md, md.data(), &len);
  return ToHex(md.data(), len);
}

}  // namespace plumb::plans
