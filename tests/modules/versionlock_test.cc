// dnf versionlock's list (python3-dnf-plugin-versionlock): its entries, and the packages facts
// marking a locked package held on rpm nodes, as dpkg's "hi" does on deb ones.
#include <doctest/doctest.h>

#include "modules/fixtures.h"
#include "modules/packages/parse.h"

using nlohmann::json;
using namespace plumb::modules;
using plumb::testing::ReadFixture;

TEST_CASE("dnf versionlock list: NAME-EPOCH:VERSION-RELEASE.* entries, excludes marked") {
  auto l = packages::ParseVersionlockList(ReadFixture("packages/dnf-versionlock-list.txt"));
  REQUIRE(l.ok());
  REQUIRE(l->size() == 5);
  CHECK((*l)[0].name == "nvidia-driver");
  CHECK((*l)[0].evr == "3:550.90.07-1.el9");
  CHECK((*l)[3].name == "cuda-toolkit-12-4");   // dashes in the name
  CHECK((*l)[3].evr == "0:12.4.1-1");
  CHECK((*l)[4].exclude);
  // the list file: comments and blank lines, an arch instead of .*
  auto f = packages::ParseVersionlockList(ReadFixture("packages/versionlock-list-file.txt"));
  REQUIRE(f.ok());
  REQUIRE(f->size() == 2);
  CHECK((*f)[1].name == "datacenter-gpu-manager");
  CHECK((*f)[1].evr == "1:3.3.7-1");
  CHECK(packages::ParseVersionlockList("").ok());
  CHECK(packages::ParseVersionlockList("Last metadata expiration check: 0:04:12 ago on Thu 03 Dec 2026.\n")->empty());
  for (const char* bad : {"kernel\n", "kernel-5.14.0-427.el9.*\n", "-0:1-2.*\n", "x-a:1-2.*\n", "x-0:1.*\n"}) {
    CAPTURE(bad);
    CHECK_FALSE(packages::ParseVersionlockList(bad).ok());
  }
}

TEST_CASE("packages facts on rpm: a versionlock on the installed version is held") {
  std::vector<ProbePart> parts = {
      {"list", 0,
       "nvidia-driver\t3\t550.90.07-1.el9\tx86_64\ncuda-drivers\t(none)\t535.161.08-1\tx86_64\n"
       "nvidia-container-toolkit\t(none)\t1.16.1-1\tx86_64\n"
       "kernel\t(none)\t5.14.0-427.13.1.el9_4\tx86_64\nkernel\t(none)\t5.14.0-503.11.1.el9_5\tx86_64\n"},
      {"pm", 0, "rpm\n"},
      {"locks", 0, ReadFixture("packages/dnf-versionlock-list.txt")}};
  auto f = packages::FactsFromParts(parts);
  REQUIRE(f.ok());
  CHECK((*f)["packages"]["nvidia-driver"]["held"] == true);
  CHECK((*f)["packages"]["cuda-drivers"]["held"] == false);              // locked to another version
  CHECK((*f)["packages"]["nvidia-container-toolkit"]["held"] == false);  // an exclude, not a lock
  CHECK((*f)["packages"]["kernel"]["held"] == true);   // the lock names one of its versions
  parts[2] = {"locks", 127, "plumb-absent: /etc/dnf/plugins/versionlock.list\n"};
  auto none = packages::FactsFromParts(parts);
  REQUIRE(none.ok());
  CHECK((*none)["packages"]["nvidia-driver"]["held"] == false);
  parts[2] = {"locks", 0, "garbage\n"};
  CHECK_FALSE(packages::FactsFromParts(parts).ok());
}
