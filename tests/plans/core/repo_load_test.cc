// Loading the cluster repo (plans/core/repo_load): the checked-keys rule the registry gives the
// loader, the headline of a failed load, where the repo is found, and paths the repo names.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "plans/core/repo_load.h"

using namespace plumb;
namespace fs = std::filesystem;

TEST_CASE("repo load: a pin some module checks is known to the loader; others are not") {
  inventory::LoadOptions o = plans::RepoLoadOptions("pod-a", "main", true);
  CHECK(o.repo == "pod-a");
  CHECK(o.ref == "main");
  CHECK(o.working_tree);
  REQUIRE(o.is_checked);
  CHECK(o.is_checked("/kernel"));
  CHECK(o.is_checked("/nvidia/driver"));
  CHECK_FALSE(o.is_checked("/no_such_module/key"));
}

TEST_CASE("repo load: a repo that cannot be read, or one that is invalid, in one line") {
  inventory::LoadedCluster unreadable;
  unreadable.diags.Add(Diagnostic::Error("source.ref", "no ref 'mian'"));
  Diagnostic d = plans::RepoLoadFailure(unreadable, "pod-a", "mian", false);
  CHECK(d.code == "repo.unreadable");
  CHECK(d.message == "cannot read the cluster repo pod-a at mian");
  CHECK(d.hint.empty());

  inventory::LoadedCluster invalid;
  invalid.diags.Add(Diagnostic::Error("schema.type", "x", {"stacks/a.yaml", 1, 1}));
  invalid.diags.Add(Diagnostic::Error("schema.type", "y", {"stacks/a.yaml", 2, 1}));
  d = plans::RepoLoadFailure(invalid, "pod-a", "main", true);
  CHECK(d.code == "repo.invalid");
  CHECK(d.message == "the cluster repo pod-a (working tree) is invalid (2 errors)");
  CHECK(d.hint.find("plumb validate") != std::string::npos);
}

TEST_CASE("repo load: the repo is the nearest directory up that holds .git") {
  const fs::path top = fs::temp_directory_path() / fmt::format("plumb-repo-load-{:x}", std::random_device{}());
  fs::create_directories(top / "repo" / ".git");
  fs::create_directories(top / "repo" / "stacks" / "deep");
  fs::create_directories(top / "bare");
  CHECK(plans::DiscoverRepo((top / "repo").string()) == (top / "repo").string());
  CHECK(plans::DiscoverRepo((top / "repo" / "stacks" / "deep").string()) == (top / "repo").string());
  const std::string bare = (top / "bare").string();
  // No .git above it (unless the temporary directory is in a git repo: then that one).
  const std::string found = plans::DiscoverRepo(bare);
  CHECK((found == bare || fs::exists(fs::path(found) / ".git")));
  fs::remove_all(top);
}

TEST_CASE("repo load: paths the repo names are the repo's unless absolute") {
  CHECK(plans::RepoPath("pod-a", "certs/ca.pem") == "pod-a/certs/ca.pem");
  CHECK(plans::RepoPath("pod-a", "/etc/ca.pem") == "/etc/ca.pem");
  CHECK(plans::RepoPath("pod-a", "") == "");
}
