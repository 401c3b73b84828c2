// nccl_conf: /etc/nccl.conf read as NCCL reads it, diffed key by key, and written one key at a
// time atomically with every other line kept; values never reach a shell unquoted.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "fakes/fake_shell.h"
#include "modules/fixtures.h"
#include "modules/nccl_conf/nccl_conf.h"
#include "modules/nccl_conf/parse.h"
#include "modules/registry.h"

using nlohmann::json;
using namespace plumb::modules;
using plumb::testing::FakeShell;
using plumb::testing::ReadFixture;

namespace {

const Module& NcclConfUnderTest() {
  const Module* m = FindModule("nccl_conf");
  REQUIRE(m != nullptr);
  return *m;
}

plumb::Result<Facts> NcclConfParse(const std::string& fixture, int status = 0) {
  return NcclConfUnderTest().ParseProbe(FrameParts({{"conf", status, ReadFixture(fixture)}}), 0);
}

std::string NcclConfSlurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("nccl_conf parse: NAME=value lines, split at the first '=', the first of a name wins") {
  auto docs = NcclConfParse("nccl_conf/nccl-conf-docs.txt");
  REQUIRE(docs.ok());
  CHECK(*docs == json{{"present", true}, {"values", {{"NCCL_DEBUG", "WARN"}, {"NCCL_SOCKET_IFNAME", "=ens1f0"}}}});

  auto site = NcclConfParse("nccl_conf/nccl-conf-site.txt");
  REQUIRE(site.ok());
  CHECK((*site)["values"] == json{{"NCCL_IB_HCA", "mlx5_0:1,mlx5_1:1"},   // not the later mlx5_4
                                  {"NCCL_SOCKET_IFNAME", "^docker0,lo"},
                                  {"NCCL_IB_TIMEOUT", "22"},
                                  {"NCCL_TOPO_FILE", "/etc/nccl/topo.xml"}});

  auto absent = NcclConfParse("nccl_conf/absent.txt", 127);
  REQUIRE(absent.ok());
  CHECK(*absent == json{{"present", false}, {"values", json::object()}});

  // A last line without a newline (an editor that writes none) is a line like the others.
  auto no_newline = NcclConfUnderTest().ParseProbe(FrameParts({{"conf", 0, "NCCL_DEBUG=INFO"}}), 0);
  REQUIRE(no_newline.ok());
  CHECK((*no_newline)["values"] == json{{"NCCL_DEBUG", "INFO"}});

  auto unreadable = NcclConfUnderTest().ParseProbe(FrameParts({{"conf", 1, "cat: /etc/nccl.conf: Is a directory\n"}}), 0);
  REQUIRE_FALSE(unreadable.ok());
  CHECK(unreadable.error().code == "probe.nccl_conf");
}

TEST_CASE("nccl_conf diff: only the named keys, a number as NCCL reads it, in sync is no action") {
  Facts facts = *NcclConfParse("nccl_conf/nccl-conf-site.txt");
  json desired = {{"nccl_conf", {{"NCCL_IB_HCA", "=mlx5_0,mlx5_1"}, {"NCCL_IB_TIMEOUT", 22},
                                 {"NCCL_NET_GDR_LEVEL", "PHB"}}}};
  auto actions = NcclConfUnderTest().Diff(desired, facts);
  REQUIRE(actions.size() == 2);   // NCCL_IB_TIMEOUT is 22 already; the file's other lines are not ours
  CHECK(actions[0].key == "nccl_conf.NCCL_IB_HCA");
  CHECK(actions[0].pointer == "/nccl_conf/NCCL_IB_HCA");
  CHECK(actions[0].before == "mlx5_0:1,mlx5_1:1");
  CHECK(actions[0].after == "=mlx5_0,mlx5_1");
  CHECK(actions[0].disruption == Disruption::kNone);
  CHECK(actions[1].key == "nccl_conf.NCCL_NET_GDR_LEVEL");
  CHECK(actions[1].before.is_null());
  CHECK(NcclConfUnderTest().Diff({{"nccl_conf", {{"NCCL_IB_TIMEOUT", 22}}}}, facts).empty());
  CHECK(NcclConfUnderTest().Diff({{"sysctl", {{"vm.swappiness", 1}}}}, facts).empty());   // pins nothing of ours
}

TEST_CASE("nccl_conf apply: one key rewritten atomically, other lines kept, idempotent, quoted") {
  Facts facts = *NcclConfParse("nccl_conf/nccl-conf-site.txt");
  auto actions = NcclConfUnderTest().Diff({{"nccl_conf", {{"NCCL_IB_HCA", "=mlx5_0,mlx5_1"}}}}, facts);
  REQUIRE(actions.size() == 1);
  auto a = Action::FromJson(actions[0].ToJson());   // through the plan file, as apply sees it
  REQUIRE(a.ok());
  const std::string cmd = nccl_conf::SetCommand("NCCL_IB_HCA", "=mlx5_0,mlx5_1");
  FakeShell shell;
  NodeContext ctx;
  ctx.shell = &shell;
  shell.On(cmd);
  CHECK(NcclConfUnderTest().Apply(ctx, *a).ok());
  CHECK(shell.commands_run == std::vector<std::string>{cmd});
  CHECK(cmd.find("'=mlx5_0,mlx5_1'") != std::string::npos);

  // The command itself, on a copy of the site file (its /etc pointed at a temporary directory).
  auto dir = std::filesystem::temp_directory_path() / ("plumb-nccl-conf-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string site = ReadFixture("nccl_conf/nccl-conf-site.txt");
  { std::ofstream(dir / "nccl.conf") << site; }
  std::string local = cmd;
  for (size_t at; (at = local.find("/etc/")) != std::string::npos;) local.replace(at, 5, dir.string() + "/");
  REQUIRE(std::system(("sh -c " + plumb::transport::ShellQuote(local)).c_str()) == 0);
  const std::string want =
      "# NCCL system-wide settings (managed by the site image)\n\nNCCL_SOCKET_IFNAME=^docker0,lo\n"
      "NCCL_IB_TIMEOUT=22\nnot a setting\nNCCL_TOPO_FILE=/etc/nccl/topo.xml\nNCCL_IB_HCA==mlx5_0,mlx5_1\n";
  CHECK(NcclConfSlurp(dir / "nccl.conf") == want);
  REQUIRE(std::system(("sh -c " + plumb::transport::ShellQuote(local)).c_str()) == 0);   // idempotent
  CHECK(NcclConfSlurp(dir / "nccl.conf") == want);
  CHECK_FALSE(std::filesystem::exists(dir / ".nccl.conf.plumb-tmp"));
  // Read back, the file is what was pinned: verify's re-probe finds nothing to do.
  auto back = NcclConfUnderTest().ParseProbe(FrameParts({{"conf", 0, want}}), 0);
  REQUIRE(back.ok());
  CHECK(NcclConfUnderTest().Diff({{"nccl_conf", {{"NCCL_IB_HCA", "=mlx5_0,mlx5_1"}}}}, *back).empty());
  // No file yet: it is created with the one line.
  std::filesystem::remove(dir / "nccl.conf");
  REQUIRE(std::system(("sh -c " + plumb::transport::ShellQuote(local)).c_str()) == 0);
  CHECK(NcclConfSlurp(dir / "nccl.conf") == "NCCL_IB_HCA==mlx5_0,mlx5_1\n");
  std::filesystem::remove_all(dir);

  // A value that would reach a shell or a name that is not NCCL's is refused, nothing run.
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"NCCL_IB_HCA", "x'; rm -rf / #"}, {"NCCL_IB_HCA", "a\nNCCL_X=1"}, {"LD_PRELOAD", "/tmp/x.so"},
           {"NCCL_IB_HCA", "-e"}}) {
    Action bad = *a;
    bad.params["nccl_conf"] = name;
    bad.after = value;
    FakeShell none;
    NodeContext c;
    c.shell = &none;
    auto o = NcclConfUnderTest().Apply(c, bad);
    CHECK_FALSE(o.ok());
    CHECK(none.commands_run.empty());
  }
}
