// roce: parsers on real-format mlnx_qos and ECN sysfs outputs (tests/data/roce, see SOURCES.md),
// facts against modules/roce/facts.schema.json, Diff as a table, Apply's exact commands.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "fakes/fake_shell.h"
#include "modules/facts_schema.h"
#include "modules/fixtures.h"
#include "modules/registry.h"
#include "modules/roce/parse.h"
#include "modules/roce/roce.h"

using nlohmann::json;
using namespace plumb::modules;
using plumb::testing::FactsSchema;
using plumb::testing::FakeShell;
using plumb::testing::MakeParts;
using plumb::testing::PartSpec;
using plumb::testing::ReadFixture;

namespace {

const Module& Roce() { return *FindModule("roce"); }

// A whole roce section: the two-port netdev list, mlnx_qos present, one mlnx_qos output per
// port, the ECN files.
std::vector<PartSpec> TwoPorts(const std::string& qos0, const std::string& qos1, int status1 = 0) {
  return {{"interfaces", "@roce/interfaces-two.txt"},
          {"tool", "@roce/tool-present.txt"},
          {"qos.ens1f0np0", qos0},
          {"qos.ens1f1np1", qos1, status1},
          {"ecn", "@roce/ecn-two-ports.txt"}};
}

plumb::Result<Facts> Parse(const std::vector<PartSpec>& parts) { return Roce().ParseProbe(FrameParts(MakeParts(parts)), 0); }

json Port(const char* name, json trust, json pfc, json np, json rp) {
  return {{"name", name}, {"trust", trust}, {"pfc", pfc}, {"ecn_np", np}, {"ecn_rp", rp}};
}

// The ECN command for one netdev with ECN on priority `on` only (both halves, every priority).
std::string EcnCommand(const std::string& iface, int on) {
  std::string ecn;
  for (const char* half : {"roce_np", "roce_rp"})
    for (int p = 0; p < 8; ++p)
      ecn += std::string(ecn.empty() ? "" : " && ") + "echo '" + (p == on ? "1" : "0") + "' > '/sys/class/net/" + iface +
             "/ecn/" + half + "/enable/" + std::to_string(p) + "'";
  return ecn;
}

// How apply keeps `cmd` for the boot-time restore: the line, single-quoted, into its file.
std::string Kept(const std::string& iface, const std::string& setting, const std::string& cmd) {
  std::string quoted = "'";
  for (char c : cmd) quoted += c == '\'' ? std::string(R"('\'')") : std::string(1, c);
  quoted += "'";
  const std::string path = "'/etc/plumb/roce.d/" + iface + "." + setting + ".sh";
  return R"(mkdir -p '/etc/plumb/roce.d' && printf '%s\n' )" + quoted + " > " + path + ".tmp' && sync " + path +
         ".tmp' && mv -f " + path +
         ".tmp' " + path + "'";
}

}  // namespace

TEST_CASE("roce mlnx_qos parser: trust and PFC from every real layout") {
  struct Row { const char* fixture; const char* trust; std::vector<int> pfc; };
  for (const Row& r : std::vector<Row>{
           {"roce/mlnx-qos-ofed4-dscp-pfc3.txt", "dscp", {3}},
           {"roce/mlnx-qos-cx7-dscp-pfc3-buffers.txt", "dscp", {3}},
           {"roce/mlnx-qos-pcp-defaults-lldpad.txt", "pcp", {}},
           {"roce/mlnx-qos-trust-unsupported.txt", "none", {3, 4}},
       }) {
    CAPTURE(r.fixture);
    auto q = roce::ParseMlnxQos(ReadFixture(r.fixture));
    REQUIRE_MESSAGE(q.ok(), q.error().message);
    CHECK(q->trust == r.trust);
    CHECK(q->pfc == r.pfc);
  }
}

TEST_CASE("roce mlnx_qos parser: malformed output is a located error") {
  struct Row { std::string text; const char* error; };
  for (const Row& r : std::vector<Row>{
           {ReadFixture("roce/mlnx-qos-truncated.txt"), "no PFC configuration 'enabled' row"},
           {ReadFixture("roce/mlnx-qos-short-pfc-row.txt"), "PFC priority row without 8 priorities in line 4"},
           {"Priority trust state: vlan\n", "unknown priority trust state in line 1: 'Priority trust state: vlan'"},
           {"DCBX mode: OS controlled\nPFC configuration:\n\tpriority 0 1 2 3 4 5 6 7\n\tenabled 0 0 0 1 0 0 0 0\n",
            "no 'Priority trust state:' line"},
           {"Priority trust state: dscp\nPFC configuration:\n\tpriority 0 1 2 3 4 5 6 7\n\tenabled 0 0 0 2 0 0 0 0\n",
            "PFC enabled flag is not 0 or 1 in line 4"},
           {"Priority trust state: dscp\nPFC configuration:\n\tenabled 0 0 0 1 0 0 0 0\n",
            "PFC enabled row before its priority row in line 3"},
           {"Priority trust state: dscp\nPFC configuration:\n\tpriority 0 1 2 3 3 5 6 7\n", "bad PFC priority row in line 3"},
       }) {
    CAPTURE(r.text);
    auto q = roce::ParseMlnxQos(r.text);
    REQUIRE_FALSE(q.ok());
    CHECK(q.error().code == "probe.roce");
    CHECK_MESSAGE(q.error().message.find(r.error) != std::string::npos, q.error().message);
  }
}

TEST_CASE("roce ECN parser: both halves per netdev; anything else is a located error") {
  auto e = roce::ParseEcn(ReadFixture("roce/ecn-two-ports.txt"));
  REQUIRE(e.ok());
  REQUIRE(e->size() == 2);
  CHECK(e->at("ens1f0np0").np[3] == true);
  CHECK(e->at("ens1f0np0").np[2] == false);
  CHECK(e->at("ens1f1np1").rp[7] == true);
  for (const char* bad : {"/sys/class/net/ens1f0np0/ecn/roce_np/enable/8:1\n",
                          "/sys/class/net/ens1f0np0/ecn/roce_np/enable/3:on\n",
                          "/sys/class/net/ens1f0np0/ecn/roce_xp/enable/3:1\n", "grep: oops\n"}) {
    CAPTURE(bad);
    auto r = roce::ParseEcn(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("in line 1") != std::string::npos);
  }
}

TEST_CASE("roce facts: two ports, one bad mlnx_qos, no tool, no netdevs, a cut ECN list") {
  FactsSchema schema("roce");
  SUBCASE("two ports read whole") {
    auto f = Parse(TwoPorts("@roce/mlnx-qos-cx7-dscp-pfc3-buffers.txt", "@roce/mlnx-qos-pcp-defaults-lldpad.txt"));
    REQUIRE(f.ok());
    CHECK(schema.Errors(*f) == "");
    CHECK(*f == json{{"mlnx_qos", true}, {"restore_unit", nullptr}, {"persisted", nullptr},
                     {"interfaces", {Port("ens1f0np0", "dscp", {3}, {3}, {3}),
                                     Port("ens1f1np1", "pcp", json::array(), {0, 1, 2, 3, 4, 5, 6, 7},
                                          {0, 1, 2, 3, 4, 5, 6, 7})}}});
    CHECK(ModuleProblems(f).empty());
  }
  SUBCASE("one port's mlnx_qos fails: only its trust and PFC are unread") {
    auto f = Parse(TwoPorts("@roce/mlnx-qos-ofed4-dscp-pfc3.txt", "Netlink error: Bad value. see dmesg.\n", 1));
    REQUIRE(f.ok());
    CHECK(schema.Errors(*f) == "");
    CHECK((*f)["interfaces"][0]["pfc"] == json{3});
    CHECK((*f)["interfaces"][1]["trust"].is_null());
    CHECK((*f)["interfaces"][1]["ecn_np"].size() == 8);
    auto problems = ModuleProblems(f);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].code == "probe.roce");
    CHECK(problems[0].message == "mlnx_qos: -i ens1f1np1 exited 1: 'Netlink error: Bad value. see dmesg.'");
  }
  SUBCASE("mlnx_qos not installed: the netdevs and ECN are still read") {
    auto f = Parse({{"interfaces", "@roce/interfaces-two.txt"}, {"tool", "", 1},
                    {"qos.ens1f0np0", "plumb-absent: mlnx_qos\n", 127}, {"qos.ens1f1np1", "plumb-absent: mlnx_qos\n", 127},
                    {"ecn", "@roce/ecn-two-ports.txt"}});
    REQUIRE(f.ok());
    CHECK(schema.Errors(*f) == "");
    CHECK((*f)["mlnx_qos"] == false);
    CHECK((*f)["interfaces"][0] == Port("ens1f0np0", nullptr, nullptr, {3}, {3}));
    CHECK(ModuleProblems(f).empty());
  }
  SUBCASE("no RoCE netdev, no tool") {
    auto f = Parse({{"interfaces", ""}, {"tool", "", 1}, {"ecn", ""}});
    REQUIRE(f.ok());
    CHECK(schema.Errors(*f) == "");
    CHECK(*f == json{{"mlnx_qos", false}, {"restore_unit", nullptr}, {"persisted", nullptr}, {"interfaces", json::array()}});
  }
  SUBCASE("what plumb kept for the boot-time restore, and its unit") {
    auto parts = TwoPorts("@roce/mlnx-qos-ofed4-dscp-pfc3.txt", "@roce/mlnx-qos-ofed4-dscp-pfc3.txt");
    parts.push_back({"persisted",
                     "/etc/plumb/roce.d/ens1f0np0.trust.sh:mlnx_qos -i 'ens1f0np0' --trust 'dscp'\n"
                     "/etc/plumb/roce.d/ens1f0np0.pfc.sh:mlnx_qos -i 'ens1f0np0' --pfc '0,0,0,1,0,0,0,0'\n"
                     "/etc/plumb/roce.d/ens1f0np0.pfc.sh:# a second line someone added\n"
                     "/etc/plumb/roce.d/notes.txt.sh:echo not plumb's\n"
                     "/etc/plumb/roce.d/ens9.speed.sh:ethtool -s ens9 speed 100000\n"
                     "/etc/plumb/roce.d/ens9.ecn.sh:echo '0' > /x\n"
                     "Binary file /etc/plumb/roce.d/x.sh matches\n"});
    parts.push_back({"restore_unit", "enabled\n"});
    auto f = Parse(parts);
    REQUIRE(f.ok());
    CHECK(schema.Errors(*f) == "");
    CHECK((*f)["restore_unit"] == "enabled");
    // Every kept file, also a netdev's that is gone (ens9); names plumb does not write are skipped.
    CHECK((*f)["persisted"] ==
          json{{"ens1f0np0",
                {{"trust", "mlnx_qos -i 'ens1f0np0' --trust 'dscp'"},
                 {"pfc", "mlnx_qos -i 'ens1f0np0' --pfc '0,0,0,1,0,0,0,0'\n# a second line someone added"}}},
               {"ens9", {{"ecn", "echo '0' > /x"}}}});
    CHECK(ModuleProblems(f).empty());

    parts.back() = {"restore_unit", ""};   // systemctl is-enabled says nothing on stdout: no unit file
    CHECK((*Parse(parts))["restore_unit"] == "not-found");
  }
  SUBCASE("ECN list cut short: the second port's roce_np flags are not guessed") {
    auto parts = TwoPorts("@roce/mlnx-qos-ofed4-dscp-pfc3.txt", "@roce/mlnx-qos-ofed4-dscp-pfc3.txt");
    parts.back().source = "@roce/ecn-truncated.txt";
    auto f = Parse(parts);
    REQUIRE(f.ok());
    CHECK(schema.Errors(*f) == "");
    CHECK((*f)["interfaces"][1]["ecn_np"].is_null());
    CHECK((*f)["interfaces"][1]["ecn_rp"].is_null());
    CHECK(ModuleProblemText(f).find("ens1f1np1: 5 of the 8 roce_np/enable files read") != std::string::npos);
  }
  SUBCASE("a netdev list that is not one") {
    auto f = Parse({{"interfaces", "@roce/mlnx-qos-ofed4-dscp-pfc3.txt"}, {"tool", "@roce/tool-present.txt"}});
    REQUIRE(f.ok());
    CHECK(schema.Errors(*f) == "");
    CHECK(ModuleProblemText(f) == "probe.roce: /sys/class/net: not a netdev name in line 1: 'DCBX mode: OS controlled'");
  }
}

TEST_CASE("roce probe script: sh that parses, one mlnx_qos part per netdev") {
  std::string s = Roce().ProbeScript();
  CHECK(s.find("plumb_run \"qos.$plumb_roce_i\" mlnx_qos -i \"$plumb_roce_i\"") != std::string::npos);
  CHECK(s.find("*/mlx5_core)") != std::string::npos);
  CHECK(std::string(roce::kQosPartPrefix) == "qos.");
}

namespace {

json Facts2(json port0, json port1) { return {{"mlnx_qos", true}, {"interfaces", {port0, port1}}}; }
json Want(json roce) { return {{"fabric", {{"roce", roce}}}}; }

std::vector<std::string> Ids(const std::vector<Action>& actions) {
  std::vector<std::string> ids;
  for (const auto& a : actions) ids.push_back(a.id + " " + DisruptionName(a.disruption));
  return ids;
}

}  // namespace

TEST_CASE("roce diff: what differs, per netdev, and nothing when in sync") {
  json synced = Port("ens1f0np0", "dscp", {3}, {3}, {3});
  json defaults = Port("ens1f1np1", "pcp", json::array(), {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7});
  json pin = {{"trust", "dscp"}, {"pfc", {3}}, {"ecn", {3}}};

  CHECK(Roce().Diff(Want(pin), Facts2(synced, Port("ens1f1np1", "dscp", {3}, {3}, {3}))).empty());
  CHECK(Roce().Diff(json::object(), Facts2(synced, defaults)).empty());

  auto actions = Roce().Diff(Want(pin), Facts2(synced, defaults));
  CHECK(Ids(actions) == std::vector<std::string>{"roce.ens1f1np1.trust service-restart",
                                                 "roce.ens1f1np1.pfc service-restart", "roce.ens1f1np1.ecn none"});
  REQUIRE(actions.size() == 3);
  CHECK(actions[0].key == "fabric.roce.trust");
  CHECK(actions[0].pointer == "/fabric/roce/trust");
  CHECK(actions[0].summary == "ens1f1np1: trust dscp (have pcp)");
  CHECK(actions[1].before == json::array());
  CHECK(actions[1].after == json{3});
  CHECK(actions[2].before == json{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(actions[2].params == json{{"interface", "ens1f1np1"}, {"setting", "ecn"}, {"member", "ens1f1np1"}});

  // A listed subset: only those netdevs are judged; a duplicate, unsorted list means its set.
  json only0 = {{"interfaces", {"ens1f0np0"}}, {"pfc", {3, 3}}};
  CHECK(Roce().Diff(Want(only0), Facts2(synced, defaults)).empty());
  // np and rp disagreeing is a change, shown with both halves.
  auto half = Roce().Diff(Want({{"ecn", {3}}}), Facts2(Port("ens1f0np0", "dscp", {3}, {3}, json::array()),
                                                                  Port("ens1f1np1", "dscp", {3}, {3}, {3})));
  REQUIRE(half.size() == 1);
  CHECK(half[0].before == json{{"roce_np", {3}}, {"roce_rp", json::array()}});
}

TEST_CASE("roce diff: a setting right on the NIC but not kept for the next boot is a change") {
  json pin = {{"trust", "dscp"}, {"pfc", {3}}, {"ecn", {3}}};
  const std::string trust_cmd = "mlnx_qos -i 'ens1f0np0' --trust 'dscp'";
  const std::string pfc_cmd = "mlnx_qos -i 'ens1f0np0' --pfc '0,0,0,1,0,0,0,0'";
  auto facts = [&](json persisted, json unit) {
    return json{{"mlnx_qos", true}, {"restore_unit", unit},
                {"persisted", persisted.is_object() ? json{{"ens1f0np0", persisted}} : persisted},
                {"interfaces", {Port("ens1f0np0", "dscp", {3}, {3}, {3})}}};
  };
  // Nothing kept, no unit: each setting is kept (no disruption), then the unit installed.
  auto a = Roce().Diff(Want(pin), facts(json::object(), "not-found"));
  CHECK(Ids(a) == std::vector<std::string>{"roce.ens1f0np0.trust.persist none", "roce.ens1f0np0.pfc.persist none",
                                           "roce.ens1f0np0.ecn.persist none", "roce.restore_unit none"});
  REQUIRE(a.size() == 4);
  CHECK(a[0].key == "fabric.roce.trust");
  CHECK(a[0].before == "not persisted");
  CHECK(a[0].after == "dscp");
  CHECK(a[0].params == json{{"interface", "ens1f0np0"}, {"setting", "trust"}, {"persist_only", true},
                            {"member", "ens1f0np0"}});
  CHECK(a[0].summary == "ens1f0np0: trust \"dscp\" is set but not kept in /etc/plumb/roce.d/ens1f0np0.trust.sh: "
                        "the NIC loses it at the next reboot");
  CHECK(a[3].key == "fabric.roce.restore_unit");
  CHECK(a[3].before == "not-found");
  CHECK(a[3].after == "enabled");
  // Keeping only writes the file: the NIC is not touched again.
  CHECK(roce::ApplyCommands(a[0]) ==
        std::vector<std::string>{R"(mkdir -p '/etc/plumb/roce.d' && printf '%s\n' 'mlnx_qos -i '\''ens1f0np0'\'' --trust '\''dscp'\''' > '/etc/plumb/roce.d/ens1f0np0.trust.sh.tmp' && sync '/etc/plumb/roce.d/ens1f0np0.trust.sh.tmp' && mv -f '/etc/plumb/roce.d/ens1f0np0.trust.sh.tmp' '/etc/plumb/roce.d/ens1f0np0.trust.sh')"});

  // Kept exactly as pinned, unit enabled: in sync. Kept as something else: kept again.
  json kept = {{"trust", trust_cmd}, {"pfc", pfc_cmd}, {"ecn", EcnCommand("ens1f0np0", 3)}};
  CHECK(Roce().Diff(Want(pin), facts(kept, "enabled")).empty());
  kept["pfc"] = "mlnx_qos -i 'ens1f0np0' --pfc '0,0,0,1,1,0,0,0'";
  a = Roce().Diff(Want(pin), facts(kept, "disabled"));
  CHECK(Ids(a) == std::vector<std::string>{"roce.ens1f0np0.pfc.persist none", "roce.restore_unit none"});
  CHECK(a[0].before == "persisted differently");

  // Unread (an older snapshot, a part that failed): not judged.
  CHECK(Roce().Diff(Want(pin), facts(nullptr, nullptr)).empty());
  // A setting that differs on the NIC is one change: apply sets it, then keeps it.
  json off = {{"mlnx_qos", true}, {"restore_unit", "enabled"}, {"persisted", {{"ens1f0np0", {{"pfc", pfc_cmd}}}}},
              {"interfaces", {Port("ens1f0np0", "pcp", {3}, {3}, {3})}}};
  a = Roce().Diff(Want({{"trust", "dscp"}, {"pfc", {3}}}), off);
  CHECK(Ids(a) == std::vector<std::string>{"roce.ens1f0np0.trust service-restart"});
  CHECK(roce::ApplyCommands(a[0]) == std::vector<std::string>{trust_cmd, Kept("ens1f0np0", "trust", trust_cmd)});
}

TEST_CASE("roce diff: a kept file no pin asks for is forgotten; a masked unit or no systemd is manual") {
  const std::string trust_cmd = "mlnx_qos -i 'ens1f0np0' --trust 'dscp'";
  json facts = {{"mlnx_qos", true}, {"restore_unit", "enabled"},
                {"persisted", {{"ens1f0np0", {{"trust", trust_cmd}, {"pfc", "mlnx_qos -i 'ens1f0np0' --pfc '0,0,0,1,0,0,0,0'"}}},
                               {"ens7f0np0", {{"trust", "mlnx_qos -i 'ens7f0np0' --trust 'dscp'"}}}}},
                {"interfaces", {Port("ens1f0np0", "dscp", {3}, {3}, {3})}}};
  // trust is still pinned on ens1f0np0; pfc is no longer pinned; ens7f0np0 is gone (a swapped NIC).
  auto a = Roce().Diff(Want({{"trust", "dscp"}}), facts);
  CHECK(Ids(a) == std::vector<std::string>{"roce.ens1f0np0.pfc.forget none", "roce.ens7f0np0.trust.forget none"});
  REQUIRE(a.size() == 2);
  CHECK(a[0].summary == "ens1f0np0: pfc is kept in /etc/plumb/roce.d/ens1f0np0.pfc.sh but no pin asks for it: it "
                        "would be set again at every boot");
  CHECK(a[0].before == "kept");
  CHECK(a[0].after.is_null());
  CHECK(roce::ApplyCommands(Action::FromJson(a[1].ToJson()).value()) ==
        std::vector<std::string>{"rm -f '/etc/plumb/roce.d/ens7f0np0.trust.sh'"});
  // A listed netdev the node lacks: its file is not forgotten while the pin names it.
  a = Roce().Diff(Want({{"interfaces", {"ens1f0np0", "ens7f0np0"}}, {"trust", "dscp"}, {"pfc", {3}}}), facts);
  CHECK(Ids(a) == std::vector<std::string>{"roce.ens7f0np0.missing none"});

  // The admin's mask stays: a manual finding, nothing written; no systemd likewise.
  facts["persisted"] = {{"ens1f0np0", {{"trust", trust_cmd}}}};
  for (const char* state : {"masked", "no-systemd"}) {
    CAPTURE(state);
    facts["restore_unit"] = state;
    a = Roce().Diff(Want({{"trust", "dscp"}}), facts);
    REQUIRE(a.size() == 1);
    CHECK(a[0].id == "roce.restore_unit");
    CHECK(a[0].params == json{{"manual", true}});
    CHECK(a[0].summary.find(std::string(state) == "masked" ? "plumb-roce.service is masked" : "no systemctl") == 0);
  }
}

TEST_CASE("roce diff: missing tool, netdev, ECN sysfs are manual actions that say so") {
  json none = {{"mlnx_qos", false}, {"interfaces", json::array()}};
  auto a = Roce().Diff(Want({{"trust", "dscp"}}), none);
  CHECK(Ids(a) == std::vector<std::string>{"roce.interfaces none"});
  CHECK(a[0].summary.find("no RoCE netdev found") == 0);

  json no_tool = {{"mlnx_qos", false}, {"interfaces", {Port("ens1f0np0", nullptr, nullptr, {3}, {3})}}};
  a = Roce().Diff(Want({{"trust", "dscp"}, {"ecn", {3}}}), no_tool);
  CHECK(Ids(a) == std::vector<std::string>{"roce.mlnx_qos none"});
  CHECK(a[0].params == json{{"manual", true}});

  json no_sysfs = {{"mlnx_qos", true}, {"interfaces", {Port("ens1f0np0", "dscp", {3}, nullptr, nullptr)}}};
  a = Roce().Diff(Want({{"interfaces", {"ens1f0np0", "ens2f0np0"}}, {"ecn", {3}}}), no_sysfs);
  CHECK(Ids(a) == std::vector<std::string>{"roce.ens1f0np0.ecn none", "roce.ens2f0np0.missing none"});
  CHECK(a[1].summary.find("ens2f0np0: no such mlx5 Ethernet netdev") == 0);

  // Facts of any shape (a snapshot) never throw.
  CHECK_NOTHROW(Roce().Diff(Want({{"trust", "dscp"}}), json::array()));
  CHECK_NOTHROW(Roce().Diff(Want({{"trust", "dscp"}}), json{{"interfaces", {1, "x"}}, {"mlnx_qos", "yes"}}));
}

namespace {

Action Through(const Action& a) {   // through the plan file and back, as apply sees it
  auto back = Action::FromJson(a.ToJson());
  REQUIRE(back.ok());
  return *back;
}

struct RoceNode {
  FakeShell shell;
  NodeContext ctx;
  RoceNode() { ctx.shell = &shell; }
};

}  // namespace

TEST_CASE("roce apply: mlnx_qos and the ECN files, every value quoted") {
  json defaults = Port("ens1f1np1", "pcp", json::array(), {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto actions = Roce().Diff(Want({{"trust", "dscp"}, {"pfc", {3}}, {"ecn", {3}}}),
                             {{"mlnx_qos", true}, {"interfaces", {defaults}}});
  REQUIRE(actions.size() == 3);
  const std::string ecn = EcnCommand("ens1f1np1", 3);
  const std::string trust = "mlnx_qos -i 'ens1f1np1' --trust 'dscp'";
  const std::string pfc = "mlnx_qos -i 'ens1f1np1' --pfc '0,0,0,1,0,0,0,0'";
  // Each setting on the NIC first, then the same command kept for the next boot.
  std::vector<std::string> want = {trust, Kept("ens1f1np1", "trust", trust), pfc, Kept("ens1f1np1", "pfc", pfc),
                                   ecn,   Kept("ens1f1np1", "ecn", ecn)};
  RoceNode n;
  for (const auto& c : want) n.shell.On(c);
  for (const auto& a : actions) CHECK(Roce().Apply(n.ctx, Through(a)).ok());
  CHECK(n.shell.commands_run == want);
  CHECK(n.shell.unexpected.empty());

  // The restore unit: written whole, loaded, enabled; its ExecStart runs every kept file.
  auto unit = Roce().Diff(Want({{"ecn", {3}}}), {{"mlnx_qos", true}, {"restore_unit", "disabled"},
                                                  {"persisted", {{"ens1f1np1", {{"ecn", "x"}}}}},
                                                  {"interfaces", {Port("ens1f1np1", "pcp", json::array(), {3}, {3})}}});
  REQUIRE(unit.size() == 2);
  auto cmds = roce::ApplyCommands(Through(unit[1]));
  REQUIRE(cmds.size() == 3);
  CHECK(cmds[0].find("> '/etc/systemd/system/plumb-roce.service.tmp' && mv -f") != std::string::npos);
  CHECK(cmds[0].find(R"(ExecStart=/bin/sh -c '\''rc=0; for f in /etc/plumb/roce.d/*.sh; do [ ! -e "$$f" ] || sh "$$f" || rc=1; done; exit $$rc'\'')") !=
        std::string::npos);
  CHECK(cmds[0].find("WantedBy=multi-user.target") != std::string::npos);
  CHECK(cmds[1] == "systemctl daemon-reload");
  CHECK(cmds[2] == "systemctl enable 'plumb-roce.service'");
}

TEST_CASE("roce apply: refuses hostile values, reports failures and manual fixes") {
  json port = Port("ens1f1np1", "pcp", json::array(), json::array(), json::array());
  Action trust = Through(Roce().Diff(Want({{"trust", "dscp"}}), {{"mlnx_qos", true}, {"interfaces", {port}}})[0]);
  RoceNode n;
  for (const char* iface : {"ens1; reboot", "-i", "$(id)", ""}) {
    Action bad = trust;
    bad.params["interface"] = iface;
    auto st = Roce().Apply(n.ctx, bad);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == "apply.roce");
  }
  Action bad_value = trust;
  bad_value.after = "dscp' --pfc '1,1,1,1,1,1,1,1";
  CHECK(Roce().Apply(n.ctx, bad_value).error().code == "apply.roce");
  Action bad_pfc = Through(Roce().Diff(Want({{"pfc", {3}}}), {{"mlnx_qos", true}, {"interfaces", {port}}})[0]);
  bad_pfc.after = json{3, 9};
  CHECK(Roce().Apply(n.ctx, bad_pfc).error().code == "apply.roce");
  CHECK(n.shell.commands_run.empty());

  n.shell.On("mlnx_qos -i 'ens1f1np1' --trust 'dscp'", 1, "Priority trust state is not supported on your system\n");
  auto st = Roce().Apply(n.ctx, trust);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == "apply.roce");
  CHECK(st.error().message.find("not supported on your system") != std::string::npos);

  Action manual = Through(Roce().Diff(Want({{"trust", "dscp"}}), {{"mlnx_qos", false}, {"interfaces", {port}}})[0]);
  RoceNode m;
  st = Roce().Apply(m.ctx, manual);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == "apply.manual");
  CHECK(st.error().message.find("mlnx_qos is not installed") == 0);
  CHECK(m.shell.commands_run.empty());
}
