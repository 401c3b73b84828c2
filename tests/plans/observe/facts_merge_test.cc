// plumb facts merge: parts become one snapshot with every node once; duplicates, mixed commits
// and missing shards are refused with every problem named, or let through when allowed.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "plans/observe/facts_merge.h"

using namespace plumb;

namespace {

plans::NodeObservation Read(const std::string& name, const std::string& driver) {
  plans::NodeObservation n;
  n.node = name;
  n.reachable = true;
  n.facts.emplace("nvidia", modules::Facts{{"driver", driver}});
  n.facts_digest = plans::FactsDigest(n.facts);
  return n;
}

plans::ObservedState Header(std::string at, std::string commit, std::string shard = "") {
  plans::ObservedState h;
  h.gathered_at = std::move(at);
  h.commit = std::move(commit);
  h.shard = std::move(shard);
  return h;
}

const std::string kC1 = std::string(40, 'a');
const std::string kC2 = std::string(40, 'b');

// One part: its nodes, then its header.
void Feed(plans::SnapshotMerge& m, const std::string& source, const plans::ObservedState& header,
          std::vector<plans::NodeObservation> nodes) {
  const size_t part = m.BeginPart(source);
  for (auto& n : nodes) m.AddNode(part, std::move(n));
  m.EndPart(part, header);
}

std::string Text(const Diagnostics& d) { return d.ToText(); }

}  // namespace

TEST_CASE("shards merge into every node once, as old as the oldest part, at their commit") {
  plans::SnapshotMerge m({});
  Feed(m, "s1.json", Header("2026-12-03T10:00:05Z", kC1, "1/2"), {Read("n1", "550"), Read("n3", "550")});
  Feed(m, "s2.json", Header("2026-12-03T10:00:01Z", kC1, "2/2"), {Read("n2", "535")});
  Diagnostics d;
  auto merged = m.Finish(d);
  REQUIRE_MESSAGE(merged.ok(), Text(d));
  CHECK(d.empty());
  CHECK(merged->nodes.size() == 3);
  CHECK(merged->gathered_at == "2026-12-03T10:00:01Z");
  CHECK(merged->commit == kC1);
  CHECK(merged->shard.empty());
  CHECK(merged->nodes.at("n2").facts.at("nvidia")->at("driver") == "535");
  CHECK(merged->nodes.at("n1").facts_digest == plans::FactsDigest(merged->nodes.at("n1").facts));
}

TEST_CASE("a node in two parts is refused, named with both files; allowed, the later read wins") {
  auto run = [](bool allow, Diagnostics& d) {
    plans::SnapshotMerge m({allow, false, false});
    Feed(m, "a.json", Header("2026-12-03T10:00:09Z", kC1), {Read("n1", "old-but-later"), Read("n2", "550")});
    Feed(m, "b.json", Header("2026-12-03T10:00:00Z", kC1), {Read("n1", "earlier"), Read("n3", "550")});
    Feed(m, "c.json", Header("2026-12-03T10:00:09Z", kC1), {Read("n2", "tie-later-file")});
    return m.Finish(d);
  };
  Diagnostics refused;
  auto r = run(false, refused);
  CHECK(!r.ok());
  CHECK(refused.ErrorCount() == 2);   // one per pair of parts
  const std::string text = Text(refused);
  CHECK(text.find("1 node(s) are in both 'a.json' and 'b.json': n1") != std::string::npos);
  CHECK(text.find("'a.json' and 'c.json': n2") != std::string::npos);
  CHECK(text.find("--allow-duplicates") != std::string::npos);

  Diagnostics warned;
  auto ok = run(true, warned);
  REQUIRE_MESSAGE(ok.ok(), Text(warned));
  CHECK(warned.ErrorCount() == 0);
  CHECK(warned.WarningCount() == 2);
  CHECK(ok->nodes.at("n1").facts.at("nvidia")->at("driver") == "old-but-later");
  CHECK(ok->nodes.at("n2").facts.at("nvidia")->at("driver") == "tie-later-file");
  CHECK(ok->nodes.size() == 3);
}

TEST_CASE("parts of different commits are refused, each commit with its files; allowed, no commit") {
  auto run = [](bool allow, Diagnostics& d) {
    plans::SnapshotMerge m({false, allow, false});
    Feed(m, "x.json", Header("2026-12-03T10:00:00Z", kC1), {Read("n1", "550")});
    Feed(m, "y.json", Header("2026-12-03T10:00:00Z", kC2), {Read("n2", "550")});
    return m.Finish(d);
  };
  Diagnostics refused;
  CHECK(!run(false, refused).ok());
  const std::string text = Text(refused);
  CHECK(text.find("aaaaaaaaaaaa: 'x.json'") != std::string::npos);
  CHECK(text.find("bbbbbbbbbbbb: 'y.json'") != std::string::npos);
  Diagnostics warned;
  auto ok = run(true, warned);
  REQUIRE(ok.ok());
  CHECK(ok->commit.empty());
  CHECK(warned.WarningCount() == 1);
}

TEST_CASE("a split with a shard missing is refused, naming the shard; of different splits, always") {
  {
    plans::SnapshotMerge m({});
    Feed(m, "s1.json", Header("t", kC1, "1/3"), {Read("n1", "550")});
    Feed(m, "s3.json", Header("t", kC1, "3/3"), {Read("n3", "550")});
    Diagnostics d;
    CHECK(!m.Finish(d).ok());
    CHECK(Text(d).find("shard(s) 2/3 are missing") != std::string::npos);
  }
  {
    plans::SnapshotMerge m({false, false, true});
    Feed(m, "s1.json", Header("t", kC1, "1/3"), {Read("n1", "550")});
    Diagnostics d;
    auto ok = m.Finish(d);
    REQUIRE(ok.ok());
    CHECK(ok->nodes.size() == 1);
    CHECK(Text(d).find("2/3, 3/3") != std::string::npos);
  }
  {
    plans::SnapshotMerge m({false, false, true});
    Feed(m, "a.json", Header("t", kC1, "1/2"), {Read("n1", "550")});
    Feed(m, "b.json", Header("t", kC1, "2/3"), {Read("n2", "550")});
    Diagnostics d;
    CHECK(!m.Finish(d).ok());   // --allow-missing-shards does not cover a mixed split
    CHECK(Text(d).find("different splits (of 2, 3 parts)") != std::string::npos);
  }
}

TEST_CASE("the snapshot header keeps commit, working tree and shard through a file") {
  plans::ObservedState s = Header("2026-12-03T10:00:00Z", kC1, "2/4");
  s.working_tree = true;
  s.nodes.emplace("n1", Read("n1", "550"));
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("plumb-merge-header-" + std::to_string(::getpid()) + ".json")).string();
  REQUIRE(plans::WriteObservedState(s, path).ok());
  auto back = plans::ReadObservedState(path);
  std::filesystem::remove(path);
  REQUIRE(back.ok());
  CHECK(back->commit == kC1);
  CHECK(back->working_tree);
  CHECK(back->shard == "2/4");
  CHECK(back->gathered_at == s.gathered_at);
  CHECK(back->nodes.size() == 1);
  CHECK(plans::ToJson(*back) == plans::ToJson(s));
}

TEST_CASE("shards of different selections (--limit) are refused; of one selection, the merge keeps it") {
  auto header = [](std::string shard, std::string limit, size_t n, std::string digest) {
    plans::ObservedState h = Header("2026-12-03T10:00:00Z", kC1, std::move(shard));
    h.selection = std::move(limit);
    h.selection_nodes = n;
    h.selection_digest = std::move(digest);
    return h;
  };
  {
    // 1/2 gathered with --limit 'n[1-4]', 2/2 with --limit 'n[1-6]': 1/2 and 2/2 look whole, are not.
    plans::SnapshotMerge m({});
    Feed(m, "s1.json", header("1/2", "n[1-4]", 4, "sha256:aaaa"), {Read("n1", "550")});
    Feed(m, "s2.json", header("2/2", "n[1-6]", 6, "sha256:bbbb"), {Read("n2", "550"), Read("n5", "550")});
    Diagnostics d;
    auto merged = m.Finish(d);
    CHECK_FALSE(merged.ok());
    const std::string text = Text(d);
    CHECK(text.find("the shards were gathered from different selections of nodes") != std::string::npos);
    CHECK(text.find("--limit 'n[1-4]' (4 node(s)): 's1.json'") != std::string::npos);
    CHECK(text.find("--limit 'n[1-6]' (6 node(s)): 's2.json'") != std::string::npos);
  }
  {
    // A shard of an older plumb (no selection recorded) beside one that has it: not known to match.
    plans::SnapshotMerge m({});
    Feed(m, "s1.json", header("1/2", "", 0, ""), {Read("n1", "550")});
    Feed(m, "s2.json", header("2/2", "", 4, "sha256:aaaa"), {Read("n2", "550")});
    Diagnostics d;
    CHECK_FALSE(m.Finish(d).ok());
    CHECK(Text(d).find("selection not recorded") != std::string::npos);
  }
  {
    // The same nodes, whatever the --limit text: merged, and the merge says which selection it is.
    plans::SnapshotMerge m({});
    Feed(m, "s1.json", header("1/2", "n[1-2]", 2, "sha256:aaaa"), {Read("n1", "550")});
    Feed(m, "s2.json", header("2/2", "n1,n2", 2, "sha256:aaaa"), {Read("n2", "550")});
    Diagnostics d;
    auto merged = m.Finish(d);
    REQUIRE_MESSAGE(merged.ok(), Text(d));
    CHECK(merged->selection == "n[1-2]");
    CHECK(merged->selection_nodes == 2);
    CHECK(merged->selection_digest == "sha256:aaaa");
  }
}
