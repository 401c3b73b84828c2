#include "plans/plan/shard.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include <fmt/format.h>

#include "plans/core/digest.h"

namespace plumb::plans {
namespace {

// A whole decimal number, nothing else ("2", not "2x", "+2" or "").
bool WholeNumber(std::string_view s, int& out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

std::string Shard::ToString() const { return fmt::format("{}/{}", index, count); }

Result<Shard> ParseShard(std::string_view text) {
  const size_t slash = text.find('/');
  Shard s;
  if (slash == std::string_view::npos || !WholeNumber(text.substr(0, slash), s.index) ||
      !WholeNumber(text.substr(slash + 1), s.count) || s.count < 1 || s.index < 1 ||
      s.index > s.count) {
    return Diagnostic::Error("shard.syntax", fmt::format("--shard '{}' is not i/n with 1 <= i <= n", text),
                             {}, "--shard",
                             "shards count from 1: --shard 1/4, 2/4, 3/4 and 4/4 read every node once");
  }
  return s;
}

int ShardOf(std::string_view node, int count) {
  if (count <= 1) return 1;
  // The first 8 bytes of the name's SHA-256 as a number: spread evenly whatever the names look
  // like (gpu001..gpu999 differ in their last bytes only), and the same on every machine.
  const std::string hex = Sha256Hex(node);
  uint64_t h = 0;
  std::from_chars(hex.data(), hex.data() + 16, h, 16);
  return static_cast<int>(h % static_cast<uint64_t>(count)) + 1;
}

std::string SelectionDigest(const std::vector<const inventory::Node*>& nodes) {
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (const inventory::Node* n : nodes) names.push_back(n->name);
  std::sort(names.begin(), names.end());
  return JsonDigest(nlohmann::json(names));
}

std::vector<const inventory::Node*> NodesInShard(const std::vector<const inventory::Node*>& nodes,
                                                 const Shard& shard) {
  std::vector<const inventory::Node*> out;
  for (const inventory::Node* n : nodes)
    if (ShardOf(n->name, shard.count) == shard.index) out.push_back(n);
  return out;
}

}  // namespace plumb::plans
