// plumb facts merge over files (plans::MergeFactsFiles): parts streamed from disk, the merged
// snapshot written where asked, what is said on stderr, and the exit codes.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "plans/core/digest.h"
#include "plans/observe/facts_merge.h"
#include "schemas/exit_codes.h"

using namespace plumb;
namespace fs = std::filesystem;

namespace {

struct PartsDir {
  fs::path dir = fs::temp_directory_path() / fmt::format("plumb-merge-files-{:x}", std::random_device{}());
  PartsDir() { fs::create_directories(dir); }
  ~PartsDir() { fs::remove_all(dir); }
  // A shard's snapshot with these nodes, gathered at `at` from commit aaaa...
  std::string Part(const std::string& name, const std::string& at, const std::string& shard,
                   std::vector<std::string> nodes) {
    plans::ObservedState s;
    s.gathered_at = at;
    s.commit = std::string(40, 'a');
    s.shard = shard;
    for (const std::string& n : nodes) {
      plans::NodeObservation& o = s.nodes[n];
      o.node = n;
      o.reachable = true;
      o.facts.emplace("nvidia", modules::Facts{{"driver", "550"}});
      o.facts_digest = plans::FactsDigest(o.facts);
    }
    const std::string path = (dir / name).string();
    REQUIRE(plans::WriteObservedState(s, path).ok());
    return path;
  }
};

}  // namespace

TEST_CASE("facts merge files: shards into one snapshot on stdout, said on stderr") {
  PartsDir d;
  const std::string s1 = d.Part("s1.json", "2026-12-03T10:00:05Z", "1/2", {"n1", "n3"});
  const std::string s2 = d.Part("s2.json", "2026-12-03T10:00:01Z", "2/2", {"n2"});
  std::ostringstream out, err;
  CHECK(plans::MergeFactsFiles({s1, s2}, {}, "", out, err) == ExitCodeFor("facts merge", Outcome::kOk));
  CHECK(err.str() == "merged 2 part(s): 3 node(s) (3 read), commit aaaaaaaaaaaa, gathered from "
                     "2026-12-03T10:00:01Z\n");
  nlohmann::json j = nlohmann::json::parse(out.str());
  CHECK(j["nodes"].size() == 3);

  const std::string merged = (d.dir / "facts.json").string();
  std::ostringstream out2, err2;
  CHECK(plans::MergeFactsFiles({s1, s2}, {}, merged, out2, err2) == ExitCodeFor("facts merge", Outcome::kOk));
  CHECK(out2.str().empty());
  CHECK(err2.str().find(" -> " + merged + "\n") != std::string::npos);
  auto back = plans::ReadObservedState(merged);
  REQUIRE(back.ok());
  CHECK(back->nodes.size() == 3);
}

TEST_CASE("facts merge files: a duplicate or an unreadable part is refused; nothing written") {
  PartsDir d;
  const std::string a = d.Part("a.json", "2026-12-03T10:00:05Z", "", {"n1"});
  const std::string b = d.Part("b.json", "2026-12-03T10:00:01Z", "", {"n1"});
  const std::string out_file = (d.dir / "facts.json").string();
  std::ostringstream out, err;
  CHECK(plans::MergeFactsFiles({a, b}, {}, out_file, out, err) == ExitCodeFor("facts merge", Outcome::kRefused));
  CHECK(err.str().find("1 node(s) are in both '" + a + "' and '" + b + "': n1") != std::string::npos);
  CHECK(err.str().find("error: 2 part(s) not merged; nothing was written\n") != std::string::npos);
  CHECK_FALSE(fs::exists(out_file));

  std::ostringstream out2, err2;
  const std::string missing = (d.dir / "none.json").string();
  CHECK(plans::MergeFactsFiles({a, missing}, {}, "", out2, err2) == ExitCodeFor("facts merge", Outcome::kRefused));
  CHECK(out2.str().empty());
  CHECK(err2.str().find("none.json") != std::string::npos);

  // Allowed, the duplicate is kept once.
  std::ostringstream out3, err3;
  CHECK(plans::MergeFactsFiles({a, b}, {true, false, false}, "", out3, err3) ==
        ExitCodeFor("facts merge", Outcome::kOk));
  CHECK(nlohmann::json::parse(out3.str())["nodes"].size() == 1);
}
