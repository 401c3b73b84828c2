#include "plans/digest.h"

namespace plumb::plans {

// Sha256Hex is defined once, in plans/observed.cc (gather's facts digest uses the same one).

std::string JsonDigest(const nlohmann::json& value) {
  // dump() sorts object keys (nlohmann::json uses std::map), so equal values hash equally.
  return "sha256:" + Sha256Hex(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace plumb::plans
