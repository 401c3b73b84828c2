// The health runner: the pinned health modules' snippets as one script over one shell (run for
// real by /bin/sh through LocalShell), each section parsed and judged by its module, the node's
// verdict and the lines its drain reason carries; the fan-out over nodes; the report's formats.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fakes/fake_shell.h"
#include "modules/check_result.h"
#include "modules/probe_script.h"
#include "modules/transport/local_shell.h"
#include "plans/report/health_report.h"
#include "plans/report/prom_grammar.h"
#include "plans/rollout/health_run.h"
#include "third_party_schemas.h"

using namespace plumb;
using modules::CheckResult;
using nlohmann::json;

namespace {

// A health module measuring one number: its snippet prints `/health/<name>/measure` (or, for a
// gathered one, a constant 5) as part "value"; a check fails when the value exceeds
// `/health/<name>/max`. "garbage" as the measure makes its parser refuse the section.
class CountModule final : public modules::Module {
 public:
  CountModule(std::string name, bool on_demand) : name_(std::move(name)), pointer_("/health/" + name_) {
    info_.name = name_;
    info_.owns = {pointer_};
    info_.kind = modules::ModuleInfo::Kind::kHealth;
    info_.on_demand = on_demand;
  }
  CountModule(const CountModule&) = delete;
  const modules::ModuleInfo& Info() const override { return info_; }
  std::string ProbeScript() const override {
    return info_.on_demand ? "" : "plumb_run value printf '%s' 5";
  }
  std::string CheckScript(const json& desired) const override {
    json m = desired.at(json::json_pointer(pointer_)).value("measure", json("0"));
    return "plumb_run value printf '%s' " + transport::ShellQuote(m.get<std::string>());
  }
  Result<modules::Facts> ParseProbe(std::string_view out, int) const override {
    auto parts = modules::ParseFramedParts(out);
    if (!parts) return parts.error();
    const modules::ProbePart* p = modules::FindPart(*parts, "value");
    if (!p || p->text.empty() || p->text.find_first_not_of("0123456789") != std::string::npos)
      return Diagnostic::Error("probe." + name_, "value: not a number: '" + (p ? p->text : "") + "'");
    return json{{"value", std::stoi(p->text)}};
  }
  std::vector<modules::Action> Diff(const json&, const modules::Facts&) const override { return {}; }
  std::chrono::seconds CheckTimeout(const json&) const override {
    return std::chrono::seconds(info_.on_demand ? 1800 : 0);
  }
  std::vector<CheckResult> Checks(const json& desired, const modules::Facts& facts) const override {
    const int max = desired.at(json::json_pointer(pointer_)).value("max", 0);
    const int v = facts.value("value", -1);
    CheckResult c{name_, name_ + ".value", "count", "GPU 1",
                  v <= max ? modules::CheckStatus::kPass : modules::CheckStatus::kFail, v, {{"max", max}}, ""};
    if (c.status == modules::CheckStatus::kFail) c.message = fmt::format("{} > {}", v, max);
    return {c};
  }

 private:
  std::string name_, pointer_;
  modules::ModuleInfo info_;
};

struct HealthWorld {
  CountModule heavy{"heavy", true};
  CountModule cheap{"cheap", false};
  std::vector<const modules::Module*> all{&heavy, &cheap};
};

constexpr const char* kHealthNonce = "0123456789abcdef0123456789abcdef";

}  // namespace

TEST_CASE("health run: nothing pinned -> no checks and nothing run on the node") {
  HealthWorld w;
  testing::FakeShell sh;
  json desired = {{"kernel", "6.8.0"}, {"health", json::object()}};
  CHECK(plans::PinnedHealthModules(desired, w.all).empty());
  plans::NodeHealth h = plans::RunNodeHealth("n1", sh, desired, w.all, std::chrono::seconds(30));
  CHECK(h.checks.empty());
  CHECK(h.modules.empty());
  CHECK(sh.commands_run.empty());
  CHECK(h.Verdict() == modules::CheckStatus::kPass);
}

TEST_CASE("health run: on-demand and gathered modules run as one script, each judged") {
  HealthWorld w;
  transport::LocalShell sh;
  json desired = {{"health", {{"heavy", {{"measure", "2"}, {"max", 3}}}, {"cheap", {{"max", 9}}}}}};
  plans::NodeHealth h = plans::RunNodeHealth("n1", sh, desired, w.all, std::chrono::seconds(30), kHealthNonce);
  CHECK(h.problems.empty());
  CHECK(h.modules == std::vector<std::string>{"heavy", "cheap"});
  REQUIRE(h.checks.size() == 2);
  CHECK(h.checks[0].module == "heavy");
  CHECK(h.checks[0].measured == 2);
  CHECK(h.checks[1].module == "cheap");
  CHECK(h.checks[1].measured == 5);   // the gathered module's probe, not a check script
  CHECK(h.Verdict() == modules::CheckStatus::kPass);
  CHECK(h.FailureLines().empty());
  CHECK(h.ToJson()["verdict"] == "pass");
}

TEST_CASE("health run: a failed check fails the node and names module, subject and value") {
  HealthWorld w;
  transport::LocalShell sh;
  json desired = {{"health", {{"heavy", {{"measure", "7"}, {"max", 3}}}}}};
  plans::NodeHealth h = plans::RunNodeHealth("n1", sh, desired, w.all, std::chrono::seconds(30), kHealthNonce);
  REQUIRE(h.checks.size() == 1);
  CHECK(h.Verdict() == modules::CheckStatus::kFail);
  REQUIRE(h.FailureLines().size() == 1);
  CHECK(h.FailureLines()[0] == "heavy: count (GPU 1): 7 > 3");
}

TEST_CASE("health run: a desired value reaches the node's shell as one quoted word") {
  HealthWorld w;
  transport::LocalShell sh;
  // Were it unquoted, the shell would run the `touch`; quoted, it is the value the parser refuses.
  const std::string marker = "/tmp/plumb-health-injected";
  std::remove(marker.c_str());
  json desired = {{"health", {{"heavy", {{"measure", "1; touch " + marker}, {"max", 3}}}}}};
  plans::NodeHealth h = plans::RunNodeHealth("n1", sh, desired, w.all, std::chrono::seconds(30), kHealthNonce);
  CHECK(!std::ifstream(marker).good());
  CHECK(h.Verdict() == modules::CheckStatus::kFail);   // a check that could not be read is not a pass
  REQUIRE(h.problems.items().size() == 1);
  CHECK(h.problems.items()[0].code == "probe.heavy");
}

TEST_CASE("health run: an unreachable node is a problem, not a pass") {
  HealthWorld w;
  testing::FakeShell sh;   // answers nothing it was not told: every command fails
  json desired = {{"health", {{"cheap", {{"max", 9}}}}}};
  plans::NodeHealth h = plans::RunNodeHealth("n1", sh, desired, w.all, std::chrono::seconds(30), kHealthNonce);
  CHECK_FALSE(h.reachable);
  CHECK(h.Verdict() == modules::CheckStatus::kFail);
  REQUIRE(!h.FailureLines().empty());
  CHECK(h.FailureLines()[0].find("health.unreachable") == 0);
}

namespace {

class LocalShells final : public plans::ShellFactory {
 public:
  std::unique_ptr<transport::Shell> Open(const inventory::Node& node) override {
    if (node.name == "down") return nullptr;
    return std::make_unique<transport::LocalShell>();
  }
};

plans::report::HealthReport FleetReport(HealthWorld& w) {
  static std::vector<inventory::Node> nodes(4);
  nodes[0].name = "ok";
  nodes[1].name = "bad";
  nodes[2].name = "down";
  nodes[3].name = "none";
  static const json pass = {{"health", {{"heavy", {{"measure", "1"}, {"max", 3}}}, {"cheap", {{"max", 9}}}}}};
  static const json fail = {{"health", {{"heavy", {{"measure", "4"}, {"max", 3}}}}}};
  static const json none = json::object();
  std::vector<plans::HealthTarget> targets = {
      {&nodes[0], &pass}, {&nodes[1], &fail}, {&nodes[2], &pass}, {&nodes[3], &none}};
  LocalShells shells;
  std::set<std::string> seen;
  size_t last_done = 0;
  plans::report::HealthReport r;
  r.cluster = "tb";
  r.commit = "abc123";
  r.nodes = plans::RunHealth(targets, shells, w.all, 3, std::chrono::seconds(30),
                             [&](const plans::NodeHealth& h, size_t done, size_t total) {
                               seen.insert(h.node);
                               CHECK(total == 4);
                               CHECK(done == last_done + 1);
                               last_done = done;
                             });
  CHECK(seen.size() == 4);
  return r;
}

}  // namespace

TEST_CASE("health run: fan-out keeps the targets' order and counts every kind of node") {
  HealthWorld w;
  plans::report::HealthReport r = FleetReport(w);
  REQUIRE(r.nodes.size() == 4);
  CHECK(r.nodes[0].node == "ok");
  CHECK(r.nodes[1].node == "bad");
  CHECK(r.nodes[2].node == "down");
  CHECK(r.Passed() == 1);
  CHECK(r.Failed() == 1);
  CHECK(r.Unreachable() == 1);
  CHECK(r.NotPinned() == 1);
  const std::string text = plans::report::HealthToText(r);
  CHECK(text.find("bad: fail") != std::string::npos);
  CHECK(text.find("  FAIL heavy: count (GPU 1): 4 (max 3) - 4 > 3") != std::string::npos);
  CHECK(text.find("down: UNREACHABLE") != std::string::npos);
  CHECK(text.find("none: no health checks pinned") != std::string::npos);
  json j = plans::report::HealthToJson(r);
  CHECK(j["summary"]["failed"] == 1);
  CHECK(j["nodes"][1]["checks"][0]["status"] == "fail");
  CHECK(j["nodes"][1]["checks"][0]["threshold"]["max"] == 3);
}

TEST_CASE("health report: prometheus text parses, with one value per numeric check") {
  HealthWorld w;
  plans::report::HealthReport r = FleetReport(w);
  const std::string prom = plans::report::HealthToProm(r, 1700000000);
  auto check = testing::CheckPromText(prom);
  INFO(prom);
  CHECK(check.problems.empty());
  CHECK(check.samples >= 8);
  CHECK(prom.find("plumb_health_node_ok{cluster=\"tb\",node=\"bad\"} 0") != std::string::npos);
  CHECK(prom.find("plumb_health_node_ok{cluster=\"tb\",node=\"ok\"} 1") != std::string::npos);
  CHECK(prom.find("plumb_health_node_ok{cluster=\"tb\",node=\"down\"} 0") != std::string::npos);
  CHECK(prom.find("node=\"none\"") == std::string::npos);
  CHECK(prom.find("plumb_health_value{cluster=\"tb\",node=\"bad\",module=\"heavy\",check=\"heavy.value\",subject=\"GPU 1\"} 4") !=
        std::string::npos);
}

TEST_CASE("health report: JUnit validates against junit-10.xsd, failures and errors counted") {
  HealthWorld w;
  plans::report::HealthReport r = FleetReport(w);
  const std::string xml = plans::report::HealthToJunit(r);
  CHECK(xml.find("failures=\"1\" errors=\"1\"") != std::string::npos);
  std::string skip;
  auto xsd = testing::ThirdPartySchema("junit-10.xsd", "the JUnit XML schema", &skip);
  if (!xsd) {
    MESSAGE(skip);
    return;
  }
  char dir[] = "/tmp/plumb-health-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/health.xml";
  std::ofstream(path) << xml;
  std::string out;
  FILE* p = popen(("xmllint --noout --schema '" + *xsd + "' '" + path + "' 2>&1").c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int rc = pclose(p);
  INFO(out);
  CHECK(rc == 0);
}

namespace {

class TimeoutRecorder final : public transport::Shell {
 public:
  Result<transport::CommandOutput> Run(std::string_view, std::chrono::milliseconds timeout) override {
    seen = timeout;
    return Diagnostic::Error("ssh.timeout", "recorded");
  }
  std::chrono::milliseconds seen{0};
};

}  // namespace

TEST_CASE("health run: the round trip outlasts the checks' own timeouts") {
  HealthWorld w;
  TimeoutRecorder sh;
  json desired = {{"health", {{"heavy", {{"measure", "1"}}}, {"cheap", json::object({{"max", 1}})}}}};
  plans::RunNodeHealth("n1", sh, desired, w.all, std::chrono::seconds(30), kHealthNonce);
  CHECK(sh.seen == std::chrono::seconds(1800 + 60));   // heavy's 1800 s and a minute, not 30 s
  plans::RunNodeHealth("n1", sh, desired, w.all, std::chrono::hours(2), kHealthNonce);
  CHECK(sh.seen == std::chrono::hours(2));             // a longer limit given stays
}

TEST_CASE("health run: a busy node's GPU-loading checks are held, named, and the cheap ones run") {
  plans::SchedulerView view;
  modules::SchedulerNode busy;
  busy.name = "n1";
  busy.running_jobs = 2;
  busy.jobs = {"1234 (alice: train-llm)", "1235 (bob: eval)"};
  view.nodes["n1"] = busy;
  view.nodes["n2"].name = "n2";
  CHECK(plans::BusyReason(view, "n1") == "2 job(s) running: 1234 (alice: train-llm), 1235 (bob: eval)");
  CHECK(plans::BusyReason(view, "n2").empty());
  CHECK(plans::BusyReason(view, "n3").empty());   // not in the scheduler: nothing runs there
  plans::SchedulerView down;
  down.error = "slurmctld: connection refused";
  CHECK(plans::BusyReason(down, "n2") == "the scheduler could not be read (slurmctld: connection refused)");

  HealthWorld w;
  inventory::Node node;
  node.name = "n1";
  const json desired = {{"health", {{"heavy", {{"measure", "1"}, {"max", 3}}}, {"cheap", {{"max", 9}}}}}};
  LocalShells shells;
  auto out = plans::RunHealth({{&node, &desired, plans::BusyReason(view, "n1")}}, shells, w.all, 1,
                              std::chrono::seconds(30));
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].checks.size() == 2);
  CHECK(out[0].checks[0].module == "cheap");
  CHECK(out[0].checks[0].status == modules::CheckStatus::kPass);
  CHECK(out[0].checks[1].id == "heavy.held");
  CHECK(out[0].checks[1].status == modules::CheckStatus::kSkip);
  CHECK(out[0].checks[1].message.find("not run: 2 job(s) running: 1234 (alice: train-llm)") == 0);
  CHECK(out[0].Verdict() == modules::CheckStatus::kSkip);
}
