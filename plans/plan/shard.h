#pragma once
/// --shard i/n: one of n stable parts of the nodes, so that n runners read a big fleet between
/// them (`plumb gather --shard 2/4`) and `plumb facts merge` puts the parts back together.
#include <string>
#include <string_view>
#include <vector>

#include "inventory/model.h"
#include "schemas/result.h"

namespace plumb::plans {

struct Shard {
  int index = 1;   ///< 1-based: 1/4 .. 4/4
  int count = 1;
  std::string ToString() const;   ///< "2/4"
  bool operator==(const Shard& o) const { return index == o.index && count == o.count; }
};

/// "i/n" with 1 <= i <= n (code "shard.syntax" otherwise, naming what was given).
Result<Shard> ParseShard(std::string_view text);

/// The shard (1..count) `node` belongs to: from the SHA-256 of its name alone, so a node's
/// shard never moves when other nodes are added or removed (only when count changes).
int ShardOf(std::string_view node, int count);

/// "sha256:<hex>" of the names of `nodes` (sorted): which nodes a gather selected, whatever the
/// --limit text that selected them ("n[1-3]" and "n1,n2,n3" give the same).
std::string SelectionDigest(const std::vector<const inventory::Node*>& nodes);

/// The nodes of `nodes` in `shard`, in their order.
std::vector<const inventory::Node*> NodesInShard(const std::vector<const inventory::Node*>& nodes,
                                                 const Shard& shard);

}  // namespace plumb::plans
