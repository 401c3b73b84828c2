// Reading the cluster repo at a git ref: branch, tag, short and full SHA, unknown refs,
// not-a-repo, and that files come from the commit, not from the disk.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "inventory/git_source.h"
#include "inventory/load.h"

using namespace plumb;
using namespace plumb::inventory;
namespace fs = std::filesystem;

namespace {

// A throwaway repository built with the git CLI: two commits, a branch and a tag.
class TempRepo {
 public:
  TempRepo() {
    char tmpl[] = "/tmp/plumb-git-test.XXXXXX";
    dir_ = mkdtemp(tmpl);
    Git("init -q -b main");
  }
  ~TempRepo() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const std::string& dir() const { return dir_; }
  void Write(const std::string& path, const std::string& text) {
    fs::create_directories((fs::path(dir_) / path).parent_path());
    std::ofstream(fs::path(dir_) / path) << text;
  }
  void Git(const std::string& args) {
    std::string cmd = "cd '" + dir_ + "' && GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "
                      "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t.example GIT_COMMITTER_NAME=t "
                      "GIT_COMMITTER_EMAIL=t@t.example git " + args + " >/dev/null 2>&1";
    REQUIRE_MESSAGE(std::system(cmd.c_str()) == 0, cmd);
  }
  std::string RevParse(const std::string& ref) {
    std::string out = dir_ + "/.revparse";
    std::string cmd = "git -C '" + dir_ + "' rev-parse '" + ref + "' > '" + out + "'";
    REQUIRE(std::system(cmd.c_str()) == 0);
    std::string sha;
    std::ifstream(out) >> sha;
    fs::remove(out);
    return sha;
  }

 private:
  std::string dir_;
};

const char* kInventory =
    "cluster: c\nnodes: [ { name: a, address: a.example, groups: [g] } ]\n"
    "groups: { g: { stack: s, rollout: r } }\n";

}  // namespace

TEST_CASE("git: refs resolve to full SHAs; files come from the commit's tree") {
  TempRepo repo;
  repo.Write("inventory.yaml", kInventory);
  repo.Write("stacks/s.yaml", "nvidia: { driver: 550.90.07 }\n");
  repo.Write("rollouts/r.yaml", "max_unavailable: 1\n");
  repo.Git("add -A");
  repo.Git("commit -q -m one");
  repo.Git("tag v1");
  std::string one = repo.RevParse("HEAD");
  repo.Write("stacks/s.yaml", "nvidia: { driver: 560.35.03 }\n");
  repo.Git("commit -q -a -m two");
  repo.Git("branch old v1");
  std::string two = repo.RevParse("HEAD");
  REQUIRE(one.size() == 40);

  CHECK(*ResolveCommit(repo.dir(), "HEAD") == two);
  CHECK(*ResolveCommit(repo.dir(), "main") == two);
  CHECK(*ResolveCommit(repo.dir(), "v1") == one);
  CHECK(*ResolveCommit(repo.dir(), "old") == one);
  CHECK(*ResolveCommit(repo.dir(), one.substr(0, 7)) == one);
  CHECK(*ResolveCommit(repo.dir(), one) == one);
  CHECK(*ResolveCommit(repo.dir(), "HEAD~1") == one);

  // The working tree has uncommitted garbage; reading a ref never sees it.
  repo.Write("stacks/s.yaml", "this: [is not committed\n");
  auto at_tag = LoadCluster({repo.dir(), "v1", false, {}});
  REQUIRE_MESSAGE(at_tag.ok(), at_tag.diags.ToText());
  CHECK(at_tag.cluster.source.commit == one);
  CHECK(at_tag.cluster.source.ref == "v1");
  CHECK_FALSE(at_tag.cluster.source.working_tree);
  CHECK((*at_tag.desired.at("a").desired)["nvidia"]["driver"] == "550.90.07");
  auto at_head = LoadCluster({repo.dir(), "HEAD", false, {}});
  REQUIRE(at_head.ok());
  CHECK((*at_head.desired.at("a").desired)["nvidia"]["driver"] == "560.35.03");
  // Working-tree mode reads the disk (and says so), recording HEAD's commit.
  auto wt = LoadCluster({repo.dir(), "HEAD", true, {}});
  CHECK_FALSE(wt.ok());
  CHECK(wt.diags.items().at(0).code == "source.working-tree");
  CHECK(wt.diags.items().at(0).severity == Severity::kWarning);
  CHECK(wt.cluster.source.commit == two);
  CHECK(wt.cluster.source.working_tree);

  // Files the inventory names come from the same commit.
  auto kh = ReadRepoFile(at_tag, "stacks/s.yaml", "defaults.ssh.known_hosts");
  REQUIRE(kh.ok());
  CHECK(*kh == "nvidia: { driver: 550.90.07 }\n");
  auto missing = ReadRepoFile(at_tag, "known_hosts", "defaults.ssh.known_hosts");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message ==
        "no file known_hosts in " + repo.dir() + " at " + one.substr(0, 12) +
            " (named by defaults.ssh.known_hosts)");
  auto abs = ReadRepoFile(at_tag, repo.dir() + "/stacks/s.yaml");
  REQUIRE(abs.ok());
  CHECK(*abs == "this: [is not committed\n");  // absolute: the local disk, as written

  auto src = GitTreeSource::Open(repo.dir(), "v1");
  REQUIRE(src.ok());
  CHECK((*src)->commit() == one);
  CHECK(**(*src)->Read("stacks/s.yaml") == "nvidia: { driver: 550.90.07 }\n");
  CHECK_FALSE((*src)->Read("nope.yaml")->has_value());
  CHECK(*(*src)->List("stacks") == std::vector<std::string>{"s.yaml"});
  CHECK((*src)->List("nodir")->empty());
}

TEST_CASE("git: unknown refs name nearby refs; errors are diagnostics") {
  TempRepo repo;
  repo.Write("inventory.yaml", kInventory);
  repo.Git("add -A");
  repo.Git("commit -q -m one");
  repo.Git("tag baseline");
  repo.Git("branch upgrade");

  auto r = ResolveCommit(repo.dir(), "upgrad");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "source.unknown-ref");
  CHECK(r.error().message == "unknown ref 'upgrad' in " + repo.dir());
  CHECK(r.error().hint ==
        "did you mean 'upgrade'? known refs: baseline, main, upgrade; a short or full commit SHA "
        "also works");
  CHECK(ResolveCommit(repo.dir(), "deadbeef").error().code == "source.unknown-ref");
  CHECK(ResolveCommit(repo.dir(), "--upload-pack=x").error().code == "source.unknown-ref");
  CHECK(ResolveCommit(repo.dir(), "").error().code == "source.unknown-ref");

  auto lc = LoadCluster({repo.dir(), "nope", false, {}});
  CHECK_FALSE(lc.ok());
  CHECK(lc.diags.items().at(0).code == "source.unknown-ref");
}

TEST_CASE("git: not a repository, an empty repository, a repo without inventory.yaml") {
  char tmpl[] = "/tmp/plumb-git-test.XXXXXX";
  std::string plain = mkdtemp(tmpl);
  auto r = ResolveCommit(plain, "HEAD");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "source.not-a-repo");
  CHECK(r.error().hint.find("--working-tree") != std::string::npos);
  CHECK_FALSE(IsGitRepo(plain));
  fs::remove_all(plain);

  TempRepo empty;
  CHECK(ResolveCommit(empty.dir(), "HEAD").error().code == "source.empty-repo");

  TempRepo no_inv;
  no_inv.Write("README.md", "hi\n");
  no_inv.Git("add -A");
  no_inv.Git("commit -q -m one");
  auto lc = LoadCluster({no_inv.dir(), "HEAD", false, {}});
  CHECK_FALSE(lc.ok());
  CHECK(lc.diags.items().at(0).code == "source.missing-inventory");
  CHECK(lc.diags.items().at(0).message == "no inventory.yaml in " + no_inv.dir() + " at HEAD");
}

TEST_CASE("git: a symlink in the tree is refused, not followed") {
  TempRepo repo;
  repo.Write("real.yaml", kInventory);
  fs::create_symlink("real.yaml", fs::path(repo.dir()) / "inventory.yaml");
  repo.Git("add -A");
  repo.Git("commit -q -m one");
  auto lc = LoadCluster({repo.dir(), "HEAD", false, {}});
  CHECK_FALSE(lc.ok());
  CHECK(lc.diags.items().at(0).code == "source.not-a-file");
}

TEST_CASE("git source: a --repo that does not exist says so (not 'not a git repository')") {
  auto lc = LoadCluster({"/nonexistent/plumb-repo", "HEAD", false, {}});
  CHECK_FALSE(lc.ok());
  REQUIRE(!lc.diags.items().empty());
  CHECK(lc.diags.items()[0].code == "source.no-repo");
  CHECK(lc.diags.items()[0].message == "/nonexistent/plumb-repo does not exist");
}
