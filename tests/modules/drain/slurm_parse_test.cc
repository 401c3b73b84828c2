// Slurm parsers on captured 22.05 output and on the newer (23.02+) shape.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "modules/drain/slurm_parse.h"

using namespace plumb::modules;

namespace {
std::string SlurmParseData(const std::string& name) {
  std::ifstream f(std::string(PLUMB_TEST_DATA) + "/slurm/" + name);
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("slurm: sinfo --json 22.05 while a job runs on a draining node") {
  auto nodes = slurm::ParseSinfoJson(SlurmParseData("sinfo-22.05-draining.json"));
  REQUIRE(nodes.ok());
  auto jobs = slurm::ParseSqueueJson(SlurmParseData("squeue-22.05-running.json"));
  REQUIRE(jobs.ok());
  // The pending job holds no node; the running one holds n1.
  REQUIRE(jobs->size() == 1);
  CHECK((*jobs)[0].state == "RUNNING");
  CHECK((*jobs)[0].nodes == std::vector<std::string>{"n1"});
  slurm::AttachJobs(*nodes, *jobs);
  const auto& n1 = nodes->at("n1");
  CHECK(n1.drain);
  CHECK_FALSE(n1.drained);
  CHECK(n1.running_jobs == 1);
  CHECK(n1.state == "MIXED+DRAIN");
  CHECK(n1.DrainedByPlumb());
  CHECK(n1.reason == "plumb:20270101-000000-abcd:drain");
  const auto& n3 = nodes->at("n3");
  CHECK(n3.drained);
  CHECK_FALSE(n3.DrainedByPlumb());
  CHECK(n3.reason == "RMA gpu3");
  CHECK_FALSE(nodes->at("n2").Unavailable());
}

TEST_CASE("slurm: a completing job keeps a drained-looking node from counting as drained") {
  auto nodes = slurm::ParseSinfoJson(SlurmParseData("sinfo-22.05-drained.json"));
  REQUIRE(nodes.ok());
  // sinfo says idle + COMPLETING + DRAIN: not drained yet.
  CHECK(nodes->at("n1").state == "IDLE+COMPLETING+DRAIN");
  CHECK_FALSE(nodes->at("n1").drained);
  auto jobs = slurm::ParseSqueueJson(SlurmParseData("squeue-22.05-empty.json"));
  REQUIRE(jobs.ok());
  REQUIRE(jobs->size() == 1);
  CHECK((*jobs)[0].state == "COMPLETING");
}

TEST_CASE("slurm: down and not-responding nodes are unavailable") {
  auto nodes = slurm::ParseSinfoJson(SlurmParseData("sinfo-22.05-down.json"));
  REQUIRE(nodes.ok());
  CHECK(nodes->at("n1").down);            // idle* right after a resume
  CHECK(nodes->at("n1").Unavailable());
  CHECK(nodes->at("n2").down);
  CHECK(nodes->at("n2").drain);
  CHECK(nodes->at("n2").reason == "power supply");
  // Slurm not hearing from n1 is nobody's decision and may clear by itself; n2 was set down
  // (and drained) by someone.
  CHECK(nodes->at("n1").unresponsive);
  CHECK(nodes->at("n1").Unsettled());
  CHECK_FALSE(nodes->at("n2").Unsettled());
}

TEST_CASE("slurm: scontrol show node -o, the fallback, agrees with sinfo --json") {
  for (auto files : {std::pair{"scontrol-show-node-22.05.txt", "sinfo-22.05-draining.json"},
                      std::pair{"scontrol-show-node-22.05-down.txt", "sinfo-22.05-down.json"}}) {
    const char* text = files.first;   // not a structured binding: doctest's CAPTURE is a lambda
    const char* json = files.second;
    CAPTURE(text);
    auto a = slurm::ParseScontrolNodes(SlurmParseData(text));
    auto b = slurm::ParseSinfoJson(SlurmParseData(json));
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    REQUIRE(a->size() == b->size());
    for (const auto& node : *b) {
      const std::string& name = node.first;
      const auto& n = node.second;
      CAPTURE(name);
      CHECK(a->at(name).drain == n.drain);
      CHECK(a->at(name).drained == n.drained);
      CHECK(a->at(name).down == n.down);
      CHECK(a->at(name).reason == n.reason);   // " [root@time]" stripped
    }
  }
  CHECK_FALSE(slurm::ParseScontrolNodes("garbage\n").ok());
}

TEST_CASE("slurm: a claim in a node's comment, next to an admin's words, from JSON and the fallback") {
  auto a = slurm::ParseSinfoJson(SlurmParseData("sinfo-22.05-claim.json"));
  auto b = slurm::ParseScontrolNodes(SlurmParseData("scontrol-show-node-22.05-claim.txt"));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  for (const auto* nodes : {&*a, &*b}) {
    const auto& n1 = nodes->at("n1");
    CHECK(n1.comment == "GPU3 fan noisy [plumb-claim:20261201-191500-ab12@1796152500]");
    REQUIRE(n1.claim);
    CHECK(n1.claim->run == "20261201-191500-ab12");
    CHECK(n1.claim->since == 1796152500);
    CHECK_FALSE(n1.Unavailable());          // a claim takes nothing out of service
    CHECK(nodes->at("n2").comment.empty());
    CHECK_FALSE(nodes->at("n2").claim);
    CHECK(nodes->at("n2").reason == "RMA gpu3");
  }
}

TEST_CASE("slurm: the 23.02+ shape (arrays, wrapped numbers) reads the same") {
  auto nodes = slurm::ParseSinfoJson(SlurmParseData("sinfo-24.05-shape.json"));
  REQUIRE(nodes.ok());
  auto jobs = slurm::ParseSqueueJson(SlurmParseData("squeue-24.05-shape.json"));
  REQUIRE(jobs.ok());
  REQUIRE(jobs->size() == 2);
  CHECK((*jobs)[0].id == "1234");
  slurm::AttachJobs(*nodes, *jobs);
  CHECK(nodes->at("gpu001").running_jobs == 1);
  CHECK_FALSE(nodes->at("gpu001").drained);
  CHECK(nodes->at("gpu002").drain);
  CHECK_FALSE(nodes->at("gpu002").drained);   // its job is still completing
  CHECK(nodes->at("gpu003").running_jobs == 1);
  CHECK_FALSE(nodes->at("gpu003").drain);
  CHECK(nodes->at("gpu004").down);
  CHECK_FALSE(slurm::ParseSinfoJson("{\"meta\":{}}").ok());
  CHECK_FALSE(slurm::ParseSqueueJson("not json").ok());
}

TEST_CASE("slurm: hostlists and squeue's formatted lines") {
  CHECK(slurm::ExpandHostlist("n[1-3,07],gpu-a") ==
        std::vector<std::string>{"n1", "n2", "n3", "n07", "gpu-a"});
  CHECK(slurm::ExpandHostlist("gpu[008-010]") ==
        std::vector<std::string>{"gpu008", "gpu009", "gpu010"});
  CHECK(slurm::ExpandHostlist("").empty());
  auto jobs = slurm::ParseSqueueLines("12|RUNNING|n[1-2]|alice|train\n13|PENDING||bob|x\n");
  REQUIRE(jobs.ok());
  REQUIRE(jobs->size() == 1);
  CHECK((*jobs)[0].nodes == std::vector<std::string>{"n1", "n2"});
  CHECK((*jobs)[0].user == "alice");
}

TEST_CASE("scheduler node: who took a node out decides whether plumb may put it back") {
  SchedulerNode n;
  n.down = true;
  n.reason = "PSU swap";   // scontrol update state=down reason="PSU swap"
  CHECK(n.DownOnPurpose());
  CHECK(n.HeldByAdmin());
  n.reason = "Not responding";   // Slurm's own: the node is simply unreachable
  CHECK_FALSE(n.DownOnPurpose());
  CHECK_FALSE(n.HeldByAdmin());
  n.reason = "";
  CHECK_FALSE(n.HeldByAdmin());
  n.reason = "plumb:20270101-000000-abcd:reboot";
  CHECK_FALSE(n.DownOnPurpose());
  n.drain = true;   // down + drained by plumb: plumb's
  CHECK_FALSE(n.HeldByAdmin());
  n.reason = "RMA gpu3";   // drained by an admin (down or not)
  CHECK(n.HeldByAdmin());
  CHECK_FALSE(n.DownOnPurpose());   // a drain, not a bare down
}

TEST_CASE("slurm: errors in sinfo/squeue --json mean the scheduler is unavailable, not empty") {
  // slurmctld killed: exit 0, an errors entry, no nodes, no jobs.
  auto nodes = slurm::ParseSinfoJson(SlurmParseData("sinfo-22.05-controller-down.json"));
  REQUIRE_FALSE(nodes.ok());
  CHECK(nodes.error().code == kSchedulerUnavailable);
  CHECK(nodes.error().message.find("Unspecified error") != std::string::npos);
  auto jobs = slurm::ParseSqueueJson(SlurmParseData("squeue-22.05-controller-down.json"));
  REQUIRE_FALSE(jobs.ok());
  CHECK(jobs.error().code == kSchedulerUnavailable);
  // An empty errors list is a normal answer.
  CHECK(slurm::ParseSinfoJson(SlurmParseData("sinfo-22.05-drained.json")).ok());
}

TEST_CASE("slurm: a running job's time limit comes with it, for the drain heartbeat") {
  // The captured job has no time limit (time_limit null; end_time a year out): 0, "none".
  auto jobs = slurm::ParseSqueueJson(SlurmParseData("squeue-22.05-running.json"));
  REQUIRE(jobs.ok());
  REQUIRE(jobs->size() == 1);
  CHECK((*jobs)[0].end_unix == 0);
  // The same job with a 2-hour limit ends at its end_time.
  std::string limited = SlurmParseData("squeue-22.05-running.json");
  const std::string from = "\"time_limit\": null";
  auto at = limited.find(from);
  REQUIRE(at != std::string::npos);
  limited.replace(at, from.size(), "\"time_limit\": 120");
  auto j2 = slurm::ParseSqueueJson(limited);
  REQUIRE(j2.ok());
  CHECK((*j2)[0].end_unix == 1827531997);
  auto nodes = slurm::ParseSinfoJson(SlurmParseData("sinfo-22.05-draining.json"));
  REQUIRE(nodes.ok());
  slurm::AttachJobs(*nodes, *j2);
  REQUIRE(nodes->at("n1").job_details.size() == 1);
  CHECK(nodes->at("n1").job_details[0].end_unix == 1827531997);
  CHECK(nodes->at("n1").job_details[0].user == (*j2)[0].user);
}

TEST_CASE("slurm: a node's features and stack tag, from sinfo --json and the scontrol fallback") {
  auto a = slurm::ParseSinfoJson(SlurmParseData("sinfo-22.05-stack.json"));
  auto b = slurm::ParseScontrolNodes(SlurmParseData("scontrol-show-node-22.05-stack.txt"));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  for (const auto* nodes : {&*a, &*b}) {
    const auto& n1 = nodes->at("n1");
    CHECK(n1.features ==
          std::vector<std::string>{"gpu", "stack_h100-2025q4", "stack_commit_1a2b3c4d5e6f"});
    CHECK(n1.stack_tag == StackTag{"h100-2025q4", "1a2b3c4d5e6f"});
    // The active list is read too (equal here: no node_features plugin on the testbed).
    CHECK(n1.features_known);
    REQUIRE(n1.active_features);
    CHECK(*n1.active_features == n1.features);
    // Cleared with availablefeatures='': sinfo "", scontrol "(null)".
    CHECK(nodes->at("n2").features.empty());
    CHECK(nodes->at("n2").stack_tag.empty());
  }
  // Captures without features ("" and "(null)") read as none.
  auto c = slurm::ParseSinfoJson(SlurmParseData("sinfo-22.05-draining.json"));
  auto d = slurm::ParseScontrolNodes(SlurmParseData("scontrol-show-node-22.05.txt"));
  REQUIRE(c.ok());
  REQUIRE(d.ok());
  CHECK(c->at("n1").features.empty());
  CHECK(d->at("n1").features.empty());
  // 23.02+: a list of strings.
  auto e = slurm::ParseSinfoJson(SlurmParseData("sinfo-24.05-shape.json"));
  REQUIRE(e.ok());
  CHECK(e->at("gpu003").features ==
        std::vector<std::string>{"gpu", "stack_h100-2025q4", "stack_commit_1a2b3c4d5e6f"});
  CHECK(e->at("gpu003").stack_tag == StackTag{"h100-2025q4", "1a2b3c4d5e6f"});
  CHECK(e->at("gpu001").features.empty());
  CHECK(slurm::SplitFeatures("(null)").empty());
  CHECK(slurm::SplitFeatures("").empty());
  CHECK(slurm::SplitFeatures("a,,b") == std::vector<std::string>{"a", "b"});
}

namespace {
std::string RequestText(const StackRequest& r) {
  return r.id + "|" + r.user + "|" + r.name + "|" + r.state + "|" + r.stack;
}
std::vector<std::string> RequestTexts(const std::vector<StackRequest>& rs) {
  std::vector<std::string> out;
  for (const auto& r : rs) out.push_back(RequestText(r));
  return out;
}
}  // namespace

TEST_CASE("slurm: jobs asking for a stack, from squeue --json and its formatted fallback") {
  // Captured: 1 running with gpu&stack_h100-2025q4, 2 pending with stack_h100-2025q4, 3 running
  // without a constraint, 4 pending with stack_h100-2025q4|gpu.
  auto js = slurm::ParseStackRequestsJson(SlurmParseData("squeue-22.05-stack.json"));
  REQUIRE(js.ok());
  CHECK(RequestTexts(*js) == std::vector<std::string>{
                                 "1|root|train-llm|RUNNING|h100-2025q4",
                                 "2|root|eval|nightly|PENDING|h100-2025q4",
                                 "4|root|either|PENDING|h100-2025q4"});
  auto ls = slurm::ParseStackRequestLines(SlurmParseData("squeue-22.05-stack.txt"));
  REQUIRE(ls.ok());
  // The same jobs; job 2's name holds a '|', which the formatted output cannot tell from the
  // constraint's: its name is cut there, its stack is still right.
  CHECK(RequestTexts(*ls) == std::vector<std::string>{
                                 "2|root|eval|PENDING|h100-2025q4",
                                 "4|root|either|PENDING|h100-2025q4",
                                 "1|root|train-llm|RUNNING|h100-2025q4"});
  // One request per stack; finished jobs and jobs asking for none are left out; a name with
  // '|' and no constraint asks for nothing.
  auto more = slurm::ParseStackRequestLines(
      "7|PENDING|bob|a|stack_b|(null)\n8|RUNNING|bob|x|stack_p|stack_q\n"
      "9|COMPLETED|bob|y|stack_p\n10|SUSPENDED|eve|z|stack_p&gpu\n");
  REQUIRE(more.ok());
  CHECK(RequestTexts(*more) == std::vector<std::string>{"8|bob|x|RUNNING|p", "8|bob|x|RUNNING|q",
                                                        "10|eve|z|SUSPENDED|p"});
  CHECK_FALSE(slurm::ParseStackRequestLines("7|PENDING|bob\n").ok());
  // squeue --json lists jobs that ended a moment ago (MinJobAge): not requests.
  auto ended = slurm::ParseStackRequestsJson(
      R"({"jobs":[{"job_id":5,"job_state":"COMPLETED","features":"stack_a","user_name":"u","name":"n"},
                  {"job_id":6,"job_state":"FAILED","features":"stack_a","user_name":"u","name":"n"},
                  {"job_id":7,"job_state":"CONFIGURING","features":"stack_a","user_name":"u","name":"n"}],
          "errors":[]})");
  REQUIRE(ended.ok());
  CHECK(RequestTexts(*ended) == std::vector<std::string>{"7|u|n|CONFIGURING|a"});
  // 23.02+: job_state an array, job_id a number, features a string.
  auto shape = slurm::ParseStackRequestsJson(SlurmParseData("squeue-24.05-shape.json"));
  REQUIRE(shape.ok());
  CHECK(RequestTexts(*shape) == std::vector<std::string>{"1235|bob|eval|PENDING|h100-2025q4"});
  auto down = slurm::ParseStackRequestsJson(SlurmParseData("squeue-22.05-controller-down.json"));
  REQUIRE_FALSE(down.ok());
  CHECK(down.error().code == kSchedulerUnavailable);
}
