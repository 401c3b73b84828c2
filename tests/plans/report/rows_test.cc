// A change as the rows people read (plans/report/rows.h), from the real modules' diffs: every
// member named, and why a row that looks like no change is one (issue 33).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "modules/registry.h"
#include "plans/report/drift_render.h"
#include "plans/report/rows.h"

using nlohmann::json;
using namespace plumb;
using plans::report::RowsOf;
using plans::report::WhyOf;

TEST_CASE("rows: the pinned package missing or from another archive is said beside X -> X") {
  json desired = {{"nvidia", {{"driver", "550.90.07"}, {"nccl", "2.21.5-1+cuda12.4"}, {"cuda", "12.4.1"}}}};
  // The driver 550.90.07 is loaded, but nvidia-driver-550 was removed.
  json driver = {{"manager", "dpkg"}, {"loaded_version", "550.90.07"}, {"installed_version", "550.90.07"},
                 {"packages", {{"cuda-drivers-550", {{"version", "550.90.07-1"}}}}}};
  auto d = modules::FindModule("nvidia_driver")->Diff(desired, driver);
  REQUIRE(d.size() == 1);
  auto rows = RowsOf(d[0]);
  REQUIRE(rows.size() == 1);
  CHECK(plans::report::ShowValue(rows[0].before) == plans::report::ShowValue(rows[0].after));
  CHECK(rows[0].why == "nvidia-driver-550 is not (fully) installed");
  // NCCL at the pinned version, its -dev package from another archive.
  json nccl = {{"manager", "dpkg"}, {"version", "2.21.5-1+cuda12.4"},
               {"packages", {{"libnccl2", {{"version", "2.21.5-1+cuda12.4"}}},
                             {"libnccl-dev", {{"version", "2.21.5-1ubuntu1"}}}}}};
  auto n = modules::FindModule("nccl")->Diff(desired, nccl);
  REQUIRE(n.size() == 1);
  CHECK(WhyOf(n[0]) == "libnccl-dev is at 2.21.5-1ubuntu1, not 2.21.5-1+cuda12.4");
  CHECK(n[0].summary.find("libnccl-dev is at 2.21.5-1ubuntu1") != std::string::npos);
  // CUDA 12.4.1 in /usr/local/cuda, the toolkit package missing.
  json cuda = {{"manager", "dpkg"}, {"version", "12.4.1"}, {"packages", json::object()}};
  auto c = modules::FindModule("cuda")->Diff(desired, cuda);
  REQUIRE(c.size() == 1);
  CHECK(WhyOf(c[0]).find("cuda-toolkit-12-4 is not (fully) installed") != std::string::npos);
  // A change whose values say it needs no why.
  driver["loaded_version"] = "535.161.08";
  driver["packages"]["nvidia-driver-550"] = {{"version", "550.90.07-0ubuntu1"}};
  auto plain = modules::FindModule("nvidia_driver")->Diff(desired, driver);
  REQUIRE(plain.size() == 1);
  CHECK(WhyOf(plain[0]).empty());
}

TEST_CASE("rows: each InfiniBand port and RoCE interface off its pin is named") {
  json desired = {{"fabric", {{"infiniband", {{"state", "ACTIVE"}, {"rate_gbps", 400}}}}}};
  json facts = {{"present", true}, {"ports", json::array()}};
  for (int i = 0; i < 11; ++i)
    facts["ports"].push_back({{"ca", "mlx5_" + std::to_string(i)}, {"port", 1}, {"link_layer", "InfiniBand"},
                              {"state", i < 7 ? "Down" : "Active"}, {"rate_gbps", i < 7 ? 400.0 : 100.0}});
  auto actions = modules::FindModule("infiniband")->Diff(desired, facts);
  REQUIRE(actions.size() == 11);
  std::set<std::string> members;
  for (const auto& a : actions) {
    auto rows = RowsOf(a);
    REQUIRE(rows.size() == 1);
    members.insert(rows[0].member);
    CHECK(plans::report::RowName(rows[0].key, rows[0].member) == rows[0].key + " [" + rows[0].member + "]");
  }
  CHECK(members.size() == 11);
  CHECK(members.count("mlx5_10 port 1"));
  // An unread CA's action names the CA.
  facts["unread_cas"] = {"mlx5_11"};
  auto with_unread = modules::FindModule("infiniband")->Diff(desired, facts);
  CHECK(plans::report::MemberOf(with_unread.back()) == "mlx5_11");
  // RoCE: the interface.
  json roce_desired = {{"fabric", {{"roce", {{"trust", "dscp"}}}}}};
  json roce = {{"mlnx_qos", true},
               {"interfaces", {{{"name", "ens1f0np0"}, {"trust", "pcp"}}, {{"name", "ens1f1np1"}, {"trust", "pcp"}}}}};
  auto r = modules::FindModule("roce")->Diff(roce_desired, roce);
  std::set<std::string> ifaces;
  for (const auto& a : r) ifaces.insert(plans::report::MemberOf(a));
  CHECK(ifaces == std::set<std::string>{"ens1f0np0", "ens1f1np1"});
}

TEST_CASE("rows: a map-valued action (BIOS attributes) is a row per attribute") {
  json desired = {{"bios", {{"SriovGlobalEnable", "Enabled"}, {"WorkloadProfile", "HPC"}, {"Same", "x"}}}};
  json facts = {{"attributes", {{"SriovGlobalEnable", "Disabled"}, {"Same", "x"}}}, {"pending", json::object()}};
  auto actions = modules::FindModule("bios")->Diff(desired, facts);
  REQUIRE(actions.size() == 1);
  auto rows = RowsOf(actions[0]);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].key == "bios.SriovGlobalEnable");
  CHECK(rows[0].before == "Disabled");
  CHECK(rows[0].after == "Enabled");
  CHECK(rows[1].key == "bios.WorkloadProfile");
  CHECK(rows[1].before.is_null());
  CHECK(rows[0].why.empty());
}
