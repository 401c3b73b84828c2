// plumb bmc's pipeline (plans/session/bmc_session): targets from a file or the repo, narrowed
// by patterns; the TLS and credentials the flags leave; bmc plan's reads, changes and cancel.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fakes/fake_redfish.h"
#include "fakes/forward_http.h"
#include "modules/transport/redfish_client.h"
#include "plans/session/bmc_session.h"

using namespace plumb;

namespace {

// A Redfish module whose reads the test scripts, per call; its one key is /<name>.
class ScriptedBmcModule final : public modules::Module {
 public:
  explicit ScriptedBmcModule(std::string name) : name_(std::move(name)), pointer_("/" + name_) {
    info_.name = name_;
    info_.owns = {pointer_};
    info_.channel = modules::Channel::kBmc;
  }
  const modules::ModuleInfo& Info() const override { return info_; }
  Result<modules::Facts> ProbeBmc(transport::Bmc&) const override {
    ++reads;
    return read();
  }
  std::vector<modules::Action> Diff(const nlohmann::json& desired,
                                    const modules::Facts& facts) const override {
    if (facts.value("version", "") == desired[name_].get<std::string>()) return {};
    modules::Action a;
    a.module = name_;
    a.summary = "update " + name_ + " to " + desired[name_].get<std::string>();
    a.disruption = modules::Disruption::kReboot;
    return {a};
  }
  std::function<Result<modules::Facts>()> read = [] { return modules::Facts{{"version", "1.0"}}; };
  mutable int reads = 0;

 private:
  std::string name_, pointer_;
  modules::ModuleInfo info_;
};

// Every target's BMC: a client of one fake service (the module above never asks it anything).
struct Bmcs {
  testing::FakeRedfish service{"https://127.0.0.1:8443"};
  std::vector<std::string> opened;
  plans::OpenBmc Opener() {
    return [this](const plans::BmcTarget& t) -> std::unique_ptr<transport::Bmc> {
      opened.push_back(t.node);
      transport::RedfishOptions o;
      o.base_url = t.url;
      o.node = t.node;
      return std::make_unique<transport::RedfishClient>(
          std::make_unique<testing::ForwardHttp>(&service), o);
    };
  }
};

std::vector<plans::BmcTarget> Targets(std::initializer_list<const char*> nodes) {
  std::vector<plans::BmcTarget> out;
  for (const char* n : nodes) out.push_back({n, "https://127.0.0.1:8443", ""});
  return out;
}

std::vector<std::string> NodesOf(const std::vector<plans::BmcTarget>& ts) {
  std::vector<std::string> out;
  for (const auto& t : ts) out.push_back(t.node);
  return out;
}

// A scheduler that answers with the nodes it is given, or an error; never drains.
class AnsweringScheduler final : public modules::Drainer {
 public:
  std::string_view Name() const override { return "slurm"; }
  Result<std::map<std::string, modules::SchedulerNode>> Query(
      const std::vector<std::string>& nodes) override {
    asked = nodes;
    if (!error.empty()) return Diagnostic::Error("slurm.unreachable", error);
    return answer;
  }
  Status Drain(const std::string&, const std::string&) override { return OkStatus(); }
  Status Resume(const std::string&) override { return OkStatus(); }
  std::map<std::string, modules::SchedulerNode> answer;
  std::string error;
  std::vector<std::string> asked;
};

}  // namespace

TEST_CASE("RefuseResetInService: only a node out of service with no job may be reset") {
  AnsweringScheduler s;
  modules::SchedulerNode n;
  n.name = "gpu001";
  n.state = "drained";
  n.drain = true;
  s.answer["gpu001"] = n;
  CHECK(plans::RefuseResetInService(s, "gpu001").ok());
  CHECK(s.asked == std::vector<std::string>{"gpu001"});
  s.answer["gpu001"].drain = false;   // down, no job: may be reset
  s.answer["gpu001"].down = true;
  CHECK(plans::RefuseResetInService(s, "gpu001").ok());
  s.answer["gpu001"] = n;   // draining, a job still on it
  s.answer["gpu001"].state = "draining";
  s.answer["gpu001"].running_jobs = 1;
  s.answer["gpu001"].jobs = {"1234 (alice: train)"};
  Status busy = plans::RefuseResetInService(s, "gpu001");
  REQUIRE_FALSE(busy.ok());
  CHECK(busy.error().message ==
        "gpu001 is in service in slurm (draining, running 1234 (alice: train)): a reset would "
        "kill what runs there");
  CHECK(busy.error().hint.find("scontrol update nodename=gpu001 state=drain") != std::string::npos);
  s.answer["gpu001"] = modules::SchedulerNode{};   // idle, in service
  s.answer["gpu001"].state = "idle";
  CHECK(plans::RefuseResetInService(s, "gpu001").error().message ==
        "gpu001 is in service in slurm (idle): a reset would kill what runs there");
  CHECK(plans::RefuseResetInService(s, "gpu002").error().message ==
        "slurm does not know node gpu002: its jobs cannot be checked, so it is not reset");
  s.error = "slurmctld down";
  CHECK(plans::RefuseResetInService(s, "gpu001").error().message ==
        "slurm cannot be read (slurmctld down): a node that may run a job is not reset");
}

TEST_CASE("ParseBmcTargets: name, URL and system= per line, a bad URL named by file:line and node") {
  std::istringstream ok("# testbed BMCs\nn1 https://127.0.0.1:8443 dell n1\n\nn2 https://127.0.0.1:8444 system=Blade.2\n");
  auto t = plans::ParseBmcTargets(ok, "bmcs.txt");
  REQUIRE(t.ok());
  REQUIRE(t->size() == 2);
  CHECK((*t)[0].node == "n1");
  CHECK((*t)[0].system.empty());
  CHECK((*t)[1].url == "https://127.0.0.1:8444");
  CHECK((*t)[1].system == "Blade.2");

  std::istringstream bad("n1 https://127.0.0.1:8443\nn2 ftp://127.0.0.1/x\n");
  auto refused = plans::ParseBmcTargets(bad, "bmcs.txt");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().where.file == "bmcs.txt");
  CHECK(refused.error().where.line == 2);
  CHECK(refused.error().message.rfind("node n2: ", 0) == 0);
}

TEST_CASE("BmcTargetsOfCluster: the nodes with a BMC, each with its desired state") {
  inventory::LoadedCluster lc;
  inventory::Node a, b;
  a.name = "gpu001";
  a.bmc = "https://127.0.0.1:8443";
  b.name = "gpu002";   // no BMC: not a target
  lc.cluster.nodes = {a, b};
  inventory::NodeDesired nd;
  nd.desired = nlohmann::json{{"firmware", {{"BMC", "2.0"}}}};
  lc.desired["gpu001"] = nd;
  lc.desired["gpu002"] = nd;
  std::map<std::string, nlohmann::json> desired;
  auto t = plans::BmcTargetsOfCluster(lc, desired);
  REQUIRE(t.ok());
  CHECK(NodesOf(*t) == std::vector<std::string>{"gpu001"});
  CHECK(desired.size() == 1);
  CHECK(desired.at("gpu001")["firmware"]["BMC"] == "2.0");
  lc.cluster.nodes[0].bmc = "http://127.0.0.1:8443";
  CHECK_FALSE(plans::BmcTargetsOfCluster(lc, desired).ok());   // https only
}

TEST_CASE("SelectBmcTargets: patterns in order, each node once, a term naming no BMC refused") {
  const auto all = Targets({"gpu001", "gpu002", "gpu003", "cpu001"});
  CHECK(NodesOf(*plans::SelectBmcTargets(all, {})) == NodesOf(all));
  auto sel = plans::SelectBmcTargets(all, {"gpu00[2-3]", "cpu*,gpu002", "gpu*,!gpu003"});
  REQUIRE(sel.ok());
  CHECK(NodesOf(*sel) == std::vector<std::string>{"gpu002", "gpu003", "cpu001", "gpu001"});
  auto none = plans::SelectBmcTargets(all, {"gpu009"});
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message == "no node with a BMC matches 'gpu009'");
}

TEST_CASE("ChooseBmcAccess: flags over the repo, one of CA and fingerprint, credentials required") {
  const plans::BmcAccess repo{"/repo/ca.pem", "sha256:AA", "env:BMC"};
  auto same = plans::ChooseBmcAccess(repo, {});
  REQUIRE(same.ok());
  CHECK(same->ca == "/repo/ca.pem");
  CHECK(same->fingerprint == "sha256:AA");
  CHECK(same->credentials == "env:BMC");
  auto pinned = plans::ChooseBmcAccess(repo, {"", "sha256:BB", "file:/etc/bmc"});
  REQUIRE(pinned.ok());
  CHECK(pinned->ca.empty());   // the pin given sets the repo's CA aside
  CHECK(pinned->fingerprint == "sha256:BB");
  CHECK(pinned->credentials == "file:/etc/bmc");
  auto chained = plans::ChooseBmcAccess(repo, {"/my/ca.pem", "", ""});
  REQUIRE(chained.ok());
  CHECK(chained->ca == "/my/ca.pem");
  CHECK(chained->fingerprint.empty());
  auto both = plans::ChooseBmcAccess(repo, {"/my/ca.pem", "sha256:BB", ""});
  REQUIRE_FALSE(both.ok());
  CHECK(both.error().code == "cli.tls");
  auto no_creds = plans::ChooseBmcAccess({"/repo/ca.pem", "", ""}, {});
  REQUIRE_FALSE(no_creds.ok());
  CHECK(no_creds.error().code == "bmc.credentials");
}

TEST_CASE("PlanBmcs: changes as found, a read error said once per node, unread modules listed") {
  ScriptedBmcModule fw("fw"), bios("bios");
  Bmcs bmcs;
  std::map<std::string, nlohmann::json> desired = {
      {"n1", {{"fw", "2.0"}}}, {"n2", {{"fw", "2.0"}, {"bios", "1.0"}}}, {"n3", {{"kernel", "6.8"}}}};
  int call = 0;
  auto fail_on_n2 = [&]() -> Result<modules::Facts> {
    // n1 reads fw once; n2 reads fw, then bios: both fail on n2 with one cause.
    if (++call >= 2) return Diagnostic::Error("redfish.auth", "401 from the BMC");
    return modules::Facts{{"version", "1.0"}};
  };
  fw.read = fail_on_n2;
  bios.read = fail_on_n2;
  std::vector<std::string> errors, changes;
  plans::BmcPlanOutcome p = plans::PlanBmcs(
      Targets({"n1", "n2", "n3"}), desired, {&fw, &bios}, bmcs.Opener(),
      {.cancelled = [] { return false; },
       .error = [&](const std::string& l) { errors.push_back(l); },
       .change = [&](const std::string& l) { changes.push_back(l); }});
  CHECK(bmcs.opened == std::vector<std::string>{"n1", "n2", "n3"});
  CHECK(changes == std::vector<std::string>{std::string("n1: update fw to 2.0  [") +
                                            modules::DisruptionName(modules::Disruption::kReboot) + "]"});
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].rfind("plumb: n2: ", 0) == 0);
  CHECK(errors[0].find("401 from the BMC") != std::string::npos);
  CHECK(p.changes);
  CHECK(p.partial);
  CHECK(p.unread == std::vector<std::string>{"n2 (fw, bios)"});
  CHECK_FALSE(p.cancelled);
  REQUIRE(p.nodes.size() == 3);
  CHECK(p.nodes[0]["actions"].size() == 1);
  CHECK(p.nodes[1]["unreadable"].contains("bios"));
  CHECK(p.nodes[2]["actions"].empty());   // n3 pins neither module: not read
  CHECK(fw.reads + bios.reads == 3);
}

TEST_CASE("PlanBmcs: a cancel ends the plan at the read under way, and before the next node") {
  ScriptedBmcModule fw("fw");
  Bmcs bmcs;
  std::map<std::string, nlohmann::json> desired = {{"n1", {{"fw", "2.0"}}}, {"n2", {{"fw", "2.0"}}}};
  bool cancel = false;
  fw.read = [&]() -> Result<modules::Facts> {
    cancel = true;   // the signal comes while n1's BMC is read
    return modules::Facts{{"version", "1.0"}};
  };
  std::vector<std::string> changes;
  plans::BmcPlanOutcome p = plans::PlanBmcs(
      Targets({"n1", "n2"}), desired, {&fw}, bmcs.Opener(),
      {.cancelled = [&] { return cancel; }, .change = [&](const std::string& l) { changes.push_back(l); }});
  CHECK(p.cancelled);
  CHECK(p.stopped == "n1: stopped reading its BMC");
  CHECK(changes.empty());   // what was read after the signal is not acted on
  CHECK(bmcs.opened == std::vector<std::string>{"n1"});
  CHECK(p.nodes.size() == 1);

  Bmcs none;
  plans::BmcPlanOutcome before = plans::PlanBmcs(Targets({"n1"}), desired, {&fw}, none.Opener(),
                                                 {.cancelled = [] { return true; }});
  CHECK(before.cancelled);
  CHECK(before.stopped.empty());
  CHECK(none.opened.empty());
  CHECK(before.nodes.empty());
}

TEST_CASE("EndOfBmcPlan: in sync, changes, unread; JSON; the outcome of each") {
  plans::BmcPlanOutcome p;
  CHECK(plans::EndOfBmcPlan(p, false).out == "in sync\n");
  CHECK(plans::EndOfBmcPlan(p, false).outcome == Outcome::kInSync);
  CHECK(plans::EndOfBmcPlan(p, true).out == nlohmann::json{{"nodes", p.nodes}}.dump(1) + "\n");
  p.changes = true;
  CHECK(plans::EndOfBmcPlan(p, false).out.empty());   // the changes were printed as found
  CHECK(plans::EndOfBmcPlan(p, false).outcome == Outcome::kChanges);
  p.unread = {"gpu001 (firmware)", "gpu002 (bios, power)"};
  p.partial = true;
  CHECK(plans::EndOfBmcPlan(p, false).out ==
        "plan incomplete; not read: gpu001 (firmware), gpu002 (bios, power)\n");
  CHECK(plans::EndOfBmcPlan(p, false).outcome == Outcome::kPartial);
  p.changes = false;   // never "in sync" over what could not be read
  CHECK(plans::EndOfBmcPlan(p, false).out ==
        "no changes in what could be read; not read: gpu001 (firmware), gpu002 (bios, power)\n");
}

TEST_CASE("BmcResetKind: the five --type values, nothing else, and never --targets") {
  CHECK(plans::BmcResetKind("reboot", false).value() == transport::ResetKind::kReboot);
  CHECK(plans::BmcResetKind("hard-reboot", false).value() == transport::ResetKind::kHardReboot);
  CHECK(plans::BmcResetKind("on", false).value() == transport::ResetKind::kOn);
  CHECK(plans::BmcResetKind("off", false).value() == transport::ResetKind::kOff);
  CHECK(plans::BmcResetKind("force-off", false).value() == transport::ResetKind::kForceOff);
  auto unknown = plans::BmcResetKind("cycle", true);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message == "unknown --type cycle");   // the type is said first
  CHECK_FALSE(plans::BmcResetKind("", false).ok());
  auto targets = plans::BmcResetKind("off", true);
  REQUIRE_FALSE(targets.ok());
  CHECK(targets.error().code == "cli.reset");
  CHECK(targets.error().hint == "run it in the cluster repo (--repo DIR)");
}

TEST_CASE("BmcApplyFlagsOf: apply of the Redfish modules on the --limit nodes, or refused") {
  ScriptedBmcModule firmware("firmware"), bios("bios");
  const std::vector<const modules::Module*> mods = {&firmware, &bios};
  plans::ApplyFlags in;
  in.auto_approve = true;
  in.limit = "stale";
  in.only_modules = {"kernel"};
  auto a = plans::BmcApplyFlagsOf(in, {"gpu001", "n[1-2]"}, mods, false, false);
  REQUIRE(a.ok());
  CHECK(a->only_modules == std::vector<std::string>{"firmware", "bios"});
  CHECK(a->limit == "gpu001,n[1-2]");
  CHECK(a->given.count("--limit") == 1);
  CHECK(a->auto_approve);
  auto all = plans::BmcApplyFlagsOf(in, {}, mods, false, false);
  REQUIRE(all.ok());
  CHECK(all->limit.empty());
  CHECK(all->given.count("--limit") == 0);

  auto empty = plans::BmcApplyFlagsOf(in, {"gpu001", " ,!"}, mods, false, false);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().code == "cli.limit");
  CHECK(empty.error().message == "--limit ' ,!' names no node");
  for (auto [targets, desired] : {std::pair{true, false}, std::pair{false, true}}) {
    auto refused = plans::BmcApplyFlagsOf(in, {"gpu001"}, mods, targets, desired);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code == "cli.bmc-apply");
  }
}

namespace {

// A file of `text` in the temp directory, removed at the end.
struct SetupFile {
  explicit SetupFile(const std::string& name, const std::string& text)
      : path((std::filesystem::temp_directory_path() /
              (name + "-" + std::to_string(::getpid()))).string()) {
    std::ofstream(path) << text;
  }
  ~SetupFile() { std::filesystem::remove(path); }
  std::string path;
};

Result<plans::BmcRepo> SetupRepo() {
  plans::BmcRepo r;
  for (const char* name : {"gpu001", "gpu002"}) {
    inventory::Node n;
    n.name = name;
    n.bmc = "https://127.0.0.1:8443";
    r.loaded.cluster.nodes.push_back(n);
    inventory::NodeDesired nd;
    nd.desired = nlohmann::json{{"firmware", {{"BMC", "2.0"}}}};
    r.loaded.desired[name] = nd;
  }
  r.loaded.cluster.bmc.fingerprint = "sha256:AA";
  r.loaded.cluster.bmc.credentials = "env:BMC";
  r.ca = "/repo/ca.pem";
  return r;
}

}  // namespace

TEST_CASE("PrepareBmcSetup: the repo's targets, narrowed, with their desired state and access") {
  int loads = 0;
  auto s = plans::PrepareBmcSetup({"", {"gpu002"}, "", {}}, [&] {
    ++loads;
    return SetupRepo();
  });
  REQUIRE(s.ok());
  CHECK(loads == 1);
  CHECK(NodesOf(s->targets) == std::vector<std::string>{"gpu002"});
  CHECK(s->desired.at("gpu002")["firmware"]["BMC"] == "2.0");
  CHECK(s->access.ca == "/repo/ca.pem");
  CHECK(s->access.fingerprint == "sha256:AA");
  CHECK(s->access.credentials == "env:BMC");
  auto failed = plans::PrepareBmcSetup({}, [] {
    return Result<plans::BmcRepo>(Diagnostic::Error("repo.load", "no repo"));
  });
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().code == "repo.load");
}

TEST_CASE("PrepareBmcSetup: a --targets file and --desired, the repo never read") {
  SetupFile targets("plumb-bmcs", "n1 https://127.0.0.1:8443\nn2 https://127.0.0.1:8444\n");
  SetupFile desired("plumb-desired", R"({"power": "On"})");
  int loads = 0;
  auto load = [&] {
    ++loads;
    return SetupRepo();
  };
  auto s = plans::PrepareBmcSetup({targets.path, {}, desired.path, {"", "", "env:X"}}, load);
  REQUIRE(s.ok());
  CHECK(loads == 0);
  CHECK(NodesOf(s->targets) == std::vector<std::string>{"n1", "n2"});
  CHECK(s->desired.at("n2")["power"] == "On");
  CHECK(s->access.credentials == "env:X");

  auto no_creds = plans::PrepareBmcSetup({targets.path, {}, "", {}}, load);
  REQUIRE_FALSE(no_creds.ok());
  CHECK(no_creds.error().code == "bmc.credentials");
  auto missing = plans::PrepareBmcSetup({targets.path + ".gone", {}, "", {}}, load);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "cannot read " + targets.path + ".gone");
  SetupFile garbage("plumb-garbage", "{oops");
  auto bad = plans::PrepareBmcSetup({targets.path, {}, garbage.path, {"", "", "env:X"}}, load);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == garbage.path + " is not valid JSON");
  auto none = plans::PrepareBmcSetup({targets.path, {"n9"}, "", {"", "", "env:X"}}, load);
  REQUIRE_FALSE(none.ok());
  CHECK(loads == 0);
}

TEST_CASE("BmcWaitFlag: a positive duration, or an error naming the flag") {
  CHECK(plans::BmcWaitFlag("--task-timeout", "45m").value() == std::chrono::minutes(45));
  CHECK(plans::BmcWaitFlag("--task-timeout", "90s").value() == std::chrono::seconds(90));
  auto bad = plans::BmcWaitFlag("--power-timeout", "0s");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == "cli.duration");
  CHECK(bad.error().message == "--power-timeout 0s: not a duration");
  CHECK(bad.error().hint == "like 45m, 90s or 1h");
  CHECK_FALSE(plans::BmcWaitFlag("--task-timeout", "soon").ok());
}

TEST_CASE("RefuseResetOfNode: the repo's node, asked of its policy's scheduler, or of none") {
  inventory::LoadedCluster lc;
  inventory::RolloutPolicy slurm, none;
  slurm.scheduler = inventory::DrainScheduler::kSlurm;
  none.scheduler = inventory::DrainScheduler::kNone;
  lc.cluster.rollouts = {{"rolling", slurm}, {"lab", none}};
  for (auto [node, rollout] : {std::pair{"gpu001", "rolling"}, std::pair{"gpu002", "lab"},
                               std::pair{"gpu003", "gone"}}) {
    inventory::NodeDesired nd;
    nd.node = node;
    nd.rollout = rollout;
    lc.desired[node] = nd;
  }
  std::vector<inventory::DrainScheduler> made;
  AnsweringScheduler* last = nullptr;
  auto make = [&](inventory::DrainScheduler kind) -> std::unique_ptr<modules::Drainer> {
    made.push_back(kind);
    auto s = std::make_unique<AnsweringScheduler>();
    modules::SchedulerNode idle;
    idle.state = "idle";
    s->answer["gpu001"] = idle;
    last = s.get();
    return s;
  };
  Status busy = plans::RefuseResetOfNode(lc, "gpu001", make);
  REQUIRE_FALSE(busy.ok());
  CHECK(busy.error().message == "gpu001 is in service in slurm (idle): a reset would kill what runs there");
  CHECK(made == std::vector<inventory::DrainScheduler>{inventory::DrainScheduler::kSlurm});
  CHECK(plans::RefuseResetOfNode(lc, "gpu002", make).ok());   // policy without a scheduler
  CHECK(plans::RefuseResetOfNode(lc, "gpu003", make).ok());   // no such policy
  CHECK(made.size() == 1);
  Status unknown = plans::RefuseResetOfNode(lc, "gpu009", make);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code == "bmc.reset");
  CHECK(unknown.error().message == "node gpu009 is not in the cluster repo");
  CHECK(last != nullptr);
}

TEST_CASE("BmcFlags: the sources and the auth mode the flags name") {
  plans::BmcFlags f;
  f.targets_file = "bmcs.txt";
  f.nodes = {"gpu*"};
  f.desired_file = "want.json";
  f.ca = "ca.pem";
  f.credentials = "env:B";
  const plans::BmcSources s = f.Sources();
  CHECK(s.targets_file == "bmcs.txt");
  CHECK(s.nodes == std::vector<std::string>{"gpu*"});
  CHECK(s.desired_file == "want.json");
  CHECK(s.flags.ca == "ca.pem");
  CHECK(s.flags.fingerprint.empty());
  CHECK(s.flags.credentials == "env:B");
  CHECK(f.Auth() == transport::BmcAuth::kAuto);
  f.auth = "basic";
  CHECK(f.Auth() == transport::BmcAuth::kBasic);
  f.auth = "session";
  CHECK(f.Auth() == transport::BmcAuth::kSession);
  f.auth = "other";
  CHECK(f.Auth() == transport::BmcAuth::kAuto);
}

TEST_CASE("BmcFlags: both waits, or the first flag that is no duration") {
  plans::BmcFlags f;
  auto w = f.Waits();
  REQUIRE(w.ok());
  CHECK(w->task == std::chrono::minutes(45));
  CHECK(w->power == std::chrono::minutes(5));
  f.power_timeout = "never";
  f.task_timeout = "0s";
  auto bad = f.Waits();
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "--task-timeout 0s: not a duration");
  f.task_timeout = "1h";
  CHECK(f.Waits().error().message == "--power-timeout never: not a duration");
}
