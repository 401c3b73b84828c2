// --shard i/n: syntax, every node in exactly one shard, evenly spread, and a node's shard
// independent of the other nodes (adding nodes moves none).
#include <doctest/doctest.h>

#include <map>
#include <set>

#include <fmt/format.h>

#include "plans/plan/shard.h"

using namespace plumb;

TEST_CASE("--shard takes i/n with 1 <= i <= n, and nothing else") {
  auto s = plans::ParseShard("2/4");
  REQUIRE(s.ok());
  CHECK(s->index == 2);
  CHECK(s->count == 4);
  CHECK(s->ToString() == "2/4");
  CHECK(plans::ParseShard("1/1").ok());
  for (const char* bad : {"0/4", "5/4", "4", "/4", "2/", "a/4", "2/4x", "-1/4", "2/0", "", "1/-2", " 1/2"}) {
    CAPTURE(bad);
    auto r = plans::ParseShard(bad);
    REQUIRE(!r.ok());
    CHECK(r.error().code == "shard.syntax");
    CHECK(r.error().hint.find("1/4") != std::string::npos);
  }
}

TEST_CASE("every node is in exactly one shard, and the shards are about equal") {
  std::vector<inventory::Node> storage(1000);
  std::vector<const inventory::Node*> nodes;
  for (size_t i = 0; i < storage.size(); ++i) {
    storage[i].name = fmt::format("gpu{:04}", i);
    nodes.push_back(&storage[i]);
  }
  std::set<std::string> seen;
  for (int i = 1; i <= 4; ++i) {
    auto part = plans::NodesInShard(nodes, {i, 4});
    CAPTURE(i);
    // 250 expected; a hash that split by the names' last digits would give 0 or 1000 here.
    CHECK(part.size() > 200);
    CHECK(part.size() < 300);
    for (const inventory::Node* n : part) CHECK(seen.insert(n->name).second);
  }
  CHECK(seen.size() == 1000);
  auto whole = plans::NodesInShard(nodes, {1, 1});
  CHECK(whole.size() == 1000);
}

TEST_CASE("a node's shard depends on its name and n only: adding nodes moves none") {
  std::map<std::string, int> before;
  for (int i = 0; i < 300; ++i) {
    const std::string name = fmt::format("r{}-n{}", i % 7, i);
    before[name] = plans::ShardOf(name, 8);
  }
  // Recomputed after 300 more nodes exist (the function sees one name: nothing else can move
  // it), and the same on every machine: a fixed expectation for two names.
  for (int i = 300; i < 600; ++i) plans::ShardOf(fmt::format("r{}-n{}", i % 7, i), 8);
  for (const auto& [name, shard] : before) CHECK(plans::ShardOf(name, 8) == shard);
  CHECK(plans::ShardOf("gpu001", 1) == 1);
  // From python3: int(sha256(name).hexdigest()[:16], 16) % n + 1.
  CHECK(plans::ShardOf("gpu001", 4) == 2);
  CHECK(plans::ShardOf("n4", 8) == 8);
  CHECK(plans::ShardOf("n6", 4) == 1);
}
