#include <doctest/doctest.h>

#include "modules/fixtures.h"
#include "modules/ofed/parse.h"
#include "modules/package_map.h"
#include "modules/packages/parse.h"

using namespace plumb::modules;

TEST_CASE("package map: version pins -> packages, per package manager") {
  CHECK(DriverBranch("550.90.07") == "550");
  CHECK(DriverPackages("550.90.07", "dpkg") ==
        std::vector<PackagePin>{{"cuda-drivers-550", "", "550.90.07"}, {"nvidia-driver-550", "", "550.90.07"}});
  CHECK(DriverPackages("550.90.07", "rpm") ==
        std::vector<PackagePin>{{"nvidia-driver", "550.90.07", ""}, {"cuda-drivers", "550.90.07", ""}});
  CHECK(FabricManagerPackages("550.90.07", "dpkg")[0] == PackagePin{"nvidia-fabricmanager-550", "", "550.90.07"});
  CHECK(CudaPackages("12.4.1", "dpkg") == std::vector<PackagePin>{{"cuda-toolkit-12-4", "12.4.1-1", ""}});
  CHECK(CudaPackages("12.4.1", "rpm") == std::vector<PackagePin>{{"cuda-toolkit-12-4", "12.4.1", ""}});
  CHECK(NcclPackages("2.21.5-1+cuda12.4", "dpkg")[1] == PackagePin{"libnccl-dev", "2.21.5-1+cuda12.4", ""});
  CHECK(KernelPackages("5.15.0-119-generic", "dpkg")[0] == PackagePin{"linux-image-5.15.0-119-generic", "", ""});
  CHECK(KernelPackages("5.14.0-427.13.1.el9_4.x86_64", "rpm")[0] == PackagePin{"kernel", "5.14.0-427.13.1.el9_4", ""});
}

TEST_CASE("package map: madison picks the repo's exact version for an upstream version") {
  std::string madison = plumb::testing::ReadFixture("packages/apt-cache-madison-nvidia-driver-550.txt");
  auto v = PickMadisonVersion(madison, "nvidia-driver-550", "550.90.07");
  REQUIRE(v.ok());
  CHECK(*v == "550.90.07-0ubuntu1");   // the first (highest-priority) match
  CHECK_FALSE(PickMadisonVersion(madison, "nvidia-driver-550", "550.90").ok());
  CHECK_FALSE(PickMadisonVersion(madison, "cuda-drivers-550", "550.90.07").ok());
  CHECK_FALSE(PickMadisonVersion("", "x", "1").ok());
  CHECK(DebUpstream("1:3.3.7-2") == "3.3.7");
  CHECK(DebUpstream("550.90.07") == "550.90.07");
}

TEST_CASE("version matching: exact for dpkg, epoch/release-tolerant for rpm, components for OFED") {
  CHECK(packages::VersionMatches("dpkg", "1:3.3.7", "1:3.3.7"));
  CHECK_FALSE(packages::VersionMatches("dpkg", "3.3.7", "1:3.3.7"));
  CHECK(packages::VersionMatches("dpkg", "0:1.2-1", "1.2-1"));
  CHECK(packages::VersionMatches("rpm", "3.3.7-1", "1:3.3.7-1"));
  CHECK(packages::VersionMatches("rpm", "3.3.7", "1:3.3.7-1"));
  CHECK_FALSE(packages::VersionMatches("rpm", "3.3", "3.3.7-1"));
  CHECK_FALSE(packages::VersionMatches("rpm", "2:3.3.7-1", "1:3.3.7-1"));
  CHECK(ofed::OfedVersionMatches("24.07-0.6.1.0", "24.07-0.6.1"));
  CHECK(ofed::OfedVersionMatches("23.10-1.1.9.0", "23.10-1.1.9.0"));
  CHECK_FALSE(ofed::OfedVersionMatches("24.07-0.6.1.0", "24.07-0.6.2"));
  CHECK_FALSE(ofed::OfedVersionMatches("24.07", ""));
}
