// SlurmDrainer and KubernetesDrainer over a scripted shell; NoneDrainer's bookkeeping.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "modules/drain/kubernetes_drainer.h"
#include "modules/drain/none_drainer.h"
#include "modules/drain/slurm_drainer.h"
#include "modules/drain/slurm_parse.h"

using namespace plumb;
using namespace plumb::modules;

namespace {

std::string DrainData(const std::string& name) {
  std::ifstream f(std::string(PLUMB_TEST_DATA) + "/slurm/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Answers scripted commands; records every command run; unknown commands exit 127.
class DrainScriptedShell final : public transport::Shell {
 public:
  std::map<std::string, transport::CommandOutput> answers;
  std::vector<std::string> ran;
  Result<transport::CommandOutput> Run(std::string_view command,
                                       std::chrono::milliseconds) override {
    ran.emplace_back(command);
    auto it = answers.find(std::string(command));
    if (it != answers.end()) return it->second;
    return transport::CommandOutput{127, "", "sh: not found\n"};
  }
};

}  // namespace

TEST_CASE("slurm drainer: drain and resume commands quote node and reason") {
  DrainScriptedShell sh;
  SlurmDrainer d(sh);
  const std::string reason = "plumb:r1:failed:apply:x: it's bad";
  sh.answers[SlurmDrainer::DrainCommand("n1", reason)] = {0, "", ""};
  CHECK(SlurmDrainer::DrainCommand("n1", reason) ==
        "scontrol update nodename='n1' state=drain reason='plumb:r1:failed:apply:x: it'\\''s bad'");
  CHECK(d.Drain("n1", reason).ok());
  auto st = d.Resume("n1");   // not scripted: exit 127 is an error with the message
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message.find("exit 127") != std::string::npos);
  CHECK(sh.ran.back() == "scontrol update nodename='n1' state=resume");
}

TEST_CASE("slurm drainer: a claim goes into the node's comment, the admin's words kept and quoted") {
  DrainScriptedShell sh;
  SlurmDrainer d(sh);
  CHECK(d.SharesClaims());
  SchedulerNode n;
  n.name = "n1";
  n.comment = "don't reboot before 5pm";
  const NodeClaim c{"r1", 100};
  const std::string set = SlurmDrainer::ClaimCommand(n, c);
  CHECK(set == "scontrol update nodename='n1' comment='don'\\''t reboot before 5pm [plumb-claim:r1@100]'");
  n.comment += " [plumb-claim:r1@100]";
  const std::string clear = SlurmDrainer::ClaimCommand(n, {});
  CHECK(clear == "scontrol update nodename='n1' comment='don'\\''t reboot before 5pm'");
  sh.answers[set] = {0, "", ""};
  n.comment = "don't reboot before 5pm";
  CHECK(d.SetClaim(n, c).ok());
  CHECK(sh.ran.back() == set);
}

TEST_CASE("kubernetes drainer: a claim is an annotation, read back by ParseNodes") {
  CHECK(KubernetesDrainer::ClaimCommand("k1", {"r1", 100}) ==
        "kubectl --request-timeout=30s annotate node 'k1' --overwrite 'plumb.dev/claim=r1@100'");
  CHECK(KubernetesDrainer::ClaimCommand("k1", {}) == "kubectl --request-timeout=30s annotate node 'k1' 'plumb.dev/claim-'");
  auto n = kube::ParseNodes(R"({"items":[{"metadata":{"name":"k1","annotations":{"plumb.dev/claim":"r1@100"}},
    "spec":{},"status":{"conditions":[{"type":"Ready","status":"True"}]}}]})");
  REQUIRE(n.ok());
  REQUIRE(n->at("k1").claim);
  CHECK(n->at("k1").claim->run == "r1");
  CHECK_FALSE(n->at("k1").Unavailable());
}

TEST_CASE("slurm drainer: query joins sinfo and squeue, and falls back without JSON") {
  DrainScriptedShell sh;
  SlurmDrainer d(sh);
  sh.answers["sinfo --json"] = {0, DrainData("sinfo-22.05-draining.json"), ""};
  sh.answers["squeue --json"] = {0, DrainData("squeue-22.05-running.json"), ""};
  auto q = d.Query({"n1", "n3"});
  REQUIRE(q.ok());
  CHECK(q->size() == 2);
  CHECK(q->at("n1").running_jobs == 1);
  CHECK(q->at("n3").drained);
  // Without --json (an older or stripped build): scontrol + formatted squeue.
  sh.answers.erase("sinfo --json");
  sh.answers.erase("squeue --json");
  sh.answers["scontrol show node -o"] = {0, DrainData("scontrol-show-node-22.05.txt"), ""};
  sh.answers["squeue -h -t R,CG,CF,S -o '%i|%T|%N|%u|%j'"] = {0, "1|RUNNING|n1|root|wrap\n", ""};
  auto f = d.Query({});
  REQUIRE(f.ok());
  CHECK(f->size() == 3);
  CHECK(f->at("n1").running_jobs == 1);
  CHECK_FALSE(f->at("n1").drained);
  CHECK(f->at("n3").reason == "RMA gpu3");
}

TEST_CASE("none drainer: remembers what it drained") {
  NoneDrainer d;
  CHECK_FALSE(d.Query({"a"})->at("a").Unavailable());
  REQUIRE(d.Drain("a", "plumb:r:drain").ok());
  auto q = d.Query({"a", "b"});
  CHECK(q->at("a").drained);
  CHECK(q->at("a").DrainedByPlumb());
  CHECK_FALSE(q->at("b").drain);
  REQUIRE(d.Resume("a").ok());
  CHECK_FALSE(d.Query({"a"})->at("a").drain);
}

TEST_CASE("kubernetes drainer: nodes, pods (DaemonSets ignored), and the commands") {
  // Synthetic kubectl JSON in the shape of `kubectl get nodes/pods -o json` (v1 List).
  const char* nodes = R"({"kind":"List","items":[
    {"metadata":{"name":"k1","annotations":{"plumb.dev/drain-reason":"plumb:r1:drain"}},
     "spec":{"unschedulable":true},
     "status":{"conditions":[{"type":"Ready","status":"True"}]}},
    {"metadata":{"name":"k2"},"spec":{},
     "status":{"conditions":[{"type":"Ready","status":"False"}]}}]})";
  const char* pods = R"({"kind":"List","items":[
    {"metadata":{"name":"trainer","namespace":"ml"},"spec":{"nodeName":"k1"},"status":{"phase":"Running"}},
    {"metadata":{"name":"dcgm-exporter","namespace":"mon","ownerReferences":[{"kind":"DaemonSet"}]},
     "spec":{"nodeName":"k1"},"status":{"phase":"Running"}},
    {"metadata":{"name":"done","namespace":"ml"},"spec":{"nodeName":"k2"},"status":{"phase":"Succeeded"}}]})";
  auto n = kube::ParseNodes(nodes);
  REQUIRE(n.ok());
  REQUIRE(kube::AttachPods(*n, pods).ok());
  CHECK(n->at("k1").drain);
  CHECK(n->at("k1").DrainedByPlumb());
  CHECK(n->at("k1").running_jobs == 1);
  CHECK_FALSE(n->at("k1").drained);
  CHECK(n->at("k1").jobs == std::vector<std::string>{"ml/trainer"});
  CHECK(n->at("k2").down);
  CHECK(n->at("k2").running_jobs == 0);
  // Drain only annotates and cordons (both must work); the evictions come while the run waits.
  auto cmds = KubernetesDrainer::DrainCommands("k1", "plumb:r1:drain");
  REQUIRE(cmds.size() == 2);
  CHECK(cmds[0] == "kubectl --request-timeout=30s cordon 'k1'");
  CHECK(cmds[1] == "kubectl --request-timeout=30s annotate node 'k1' --overwrite 'plumb.dev/drain-reason=plumb:r1:drain'");
  DrainScriptedShell sh;
  for (const auto& c : cmds) sh.answers[c] = {0, "", ""};
  KubernetesDrainer d(sh);
  CHECK(d.Drain("k1", "plumb:r1:drain").ok());
  CHECK(sh.ran == cmds);
  sh.answers[cmds[0]] = {1, "", "error: nodes \"k1\" is forbidden"};
  CHECK_FALSE(d.Drain("k1", "plumb:r1:drain").ok());
  // Evict: kubectl drain without --force (bare pods are never deleted), DaemonSets ignored;
  // a budget's refusal (kubectl's timeout, exit 1) is no error: the next Query decides.
  const std::string evict = KubernetesDrainer::EvictCommand("k1");
  CHECK(evict == "kubectl --request-timeout=30s drain 'k1' --ignore-daemonsets --delete-emptydir-data --timeout=6s");
  CHECK(evict.find("--force") == std::string::npos);
  sh.answers[evict] = {1, "", "error when evicting pods/\"trainer\" -n \"ml\" (will retry after 5s): "
                              "Cannot evict pod as it would violate the pod's disruption budget."};
  CHECK(d.Evict("k1").ok());
  CHECK(sh.ran.back() == evict);
  CHECK(KubernetesDrainer::EvictCommand("k1; reboot").find("'k1; reboot'") != std::string::npos);
  CHECK_FALSE(kube::ParseNodes("[]").ok());
}

TEST_CASE("kubernetes drainer: an API server that cannot answer is 'scheduler unavailable', not a node failure") {
  DrainScriptedShell sh;
  KubernetesDrainer d(sh);
  const std::string get = "kubectl --request-timeout=30s get nodes -o json";
  // kubectl prints an empty List on stdout with a 503 (measured): the exit status decides.
  sh.answers[get] = {1, "{\"kind\":\"List\",\"items\":[]}",
                     "Error from server (ServiceUnavailable): the server is currently unable to "
                     "handle the request (get nodes)\n"};
  auto q = d.Query({});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().code == kSchedulerUnavailable);
  sh.answers[get] = {1, "", "Unable to connect to the server: dial tcp 127.0.0.1:6443: connect: "
                            "connection refused\n"};
  q = d.Query({});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().code == kSchedulerUnavailable);
  // A refusal that waiting cannot cure (credentials, TLS) is an error of its own, named.
  sh.answers[get] = {1, "", "error: You must be logged in to the server (Unauthorized)\n"};
  q = d.Query({});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().code == "kube.command");
  CHECK(q.error().message.find("Unauthorized") != std::string::npos);
  // Cordon with the API gone: unavailable too (the engine waits, then pauses the run).
  const auto cmds = KubernetesDrainer::DrainCommands("k1", "plumb:r1:drain");
  sh.answers[cmds[0]] = {1, "", "Unable to connect to the server: net/http: TLS handshake timeout\n"};
  auto s = d.Drain("k1", "plumb:r1:drain");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == kSchedulerUnavailable);
  // Evict: a budget's refusal is fine; the API gone is said.
  const std::string evict = KubernetesDrainer::EvictCommand("k1");
  sh.answers[evict] = {1, "", "error: unable to drain node \"k1\": Unable to connect to the server: EOF\n"};
  auto e = d.Evict("k1");
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().code == kSchedulerUnavailable);
  // A connection closed mid-request is client-go's `"<url>": EOF`; an EOF said of anything
  // else (a file, a plugin's input) is not the API server going away.
  sh.answers[get] = {1, "", "Get \"https://127.0.0.1:6443/api/v1/nodes?limit=500\": EOF\n"};
  q = d.Query({});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().code == kSchedulerUnavailable);
  sh.answers[get] = {1, "", "error: error reading /root/.kube/config: EOF\n"};
  q = d.Query({});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().code == "kube.command");
  sh.answers[get] = {1, "", "error: error loading config file \"/root/.kube/config\": yaml: line 7: unexpected EOF\n"};
  q = d.Query({});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().code == "kube.command");
  sh.answers[get] = {1, "", "Get \"https://127.0.0.1:6443/api/v1/nodes\": unexpected EOF\n"};
  q = d.Query({});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().code == kSchedulerUnavailable);
  // Words on stdout are a listing's, never kubectl's error: not "unavailable".
  sh.answers[get] = {1, "event: Unable to connect to the server: connection refused\n", ""};
  q = d.Query({});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().code == "kube.command");
  // Nothing on stderr: the message says so and quotes only the end of stdout, never a listing.
  std::string listing = "{\"kind\":\"List\",\"items\":[";
  for (int i = 0; i < 200; ++i) listing += "\n  {\"metadata\":{\"name\":\"node-" + std::to_string(i) + "\"}},";
  sh.answers[get] = {1, listing + "\n]}\n", ""};
  q = d.Query({});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().code == "kube.command");
  CHECK(q.error().message.find("(no error output; its output ends: ") != std::string::npos);
  CHECK(q.error().message.find("node-199") != std::string::npos);
  CHECK(q.error().message.find("node-0\"") == std::string::npos);
  CHECK(q.error().message.size() < 700);
  // Cut to its last 400 bytes, never inside a character: the message stays UTF-8.
  sh.answers[get] = {1, std::string(500, 'x') + "\n" + std::string(150, 'x') + "\xc3\xa9" + std::string(398, 'y') + "\n", ""};
  q = d.Query({});
  REQUIRE_FALSE(q.ok());
  CHECK_NOTHROW((void)nlohmann::json(q.error().message).dump());
  sh.answers[get] = {1, "", ""};
  q = d.Query({});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().message.find("(no error output)") != std::string::npos);
}

TEST_CASE("kubernetes drainer: plumb's reason on a schedulable node is stale; a cordon without it is an admin's") {
  // A node plumb left failed, uncordoned by an admin (the annotation stays: uncordon keeps
  // annotations), then cordoned by that admin for an RMA.
  const char* uncordoned = R"({"kind":"List","items":[
    {"metadata":{"name":"k1","annotations":{"plumb.dev/drain-reason":"plumb:r1:failed:verify: x"}},
     "spec":{},"status":{"conditions":[{"type":"Ready","status":"True"}]}}]})";
  auto n = kube::ParseNodes(uncordoned);
  REQUIRE(n.ok());
  CHECK_FALSE(n->at("k1").drain);
  CHECK(n->at("k1").reason.empty());
  // A cordon without plumb's reason (an admin's, or a plumb drain that crashed between its
  // cordon and its annotation) is the admin's: left alone, never uncordoned by plumb.
  const char* cordoned_plain = R"({"kind":"List","items":[
    {"metadata":{"name":"k1"},"spec":{"unschedulable":true},
     "status":{"conditions":[{"type":"Ready","status":"True"}]}}]})";
  n = kube::ParseNodes(cordoned_plain);
  REQUIRE(n.ok());
  CHECK(n->at("k1").HeldByAdmin());
  CHECK_FALSE(n->at("k1").DrainedByPlumb());
}

TEST_CASE("kubernetes drainer: plan's drainer names the pods a PodDisruptionBudget holds now") {
  // Synthetic JSON in the shape of `kubectl get pods/poddisruptionbudgets -A -o json` (policy/v1
  // PodDisruptionBudget: spec.selector as a LabelSelector, status.disruptionsAllowed).
  const char* nodes = R"({"kind":"List","items":[
    {"metadata":{"name":"k1"},"spec":{},"status":{"conditions":[{"type":"Ready","status":"True"}]}}]})";
  const char* pods = R"({"kind":"List","items":[
    {"metadata":{"name":"trainer-a","namespace":"ml","labels":{"app":"trainer"}},
     "spec":{"nodeName":"k1"},"status":{"phase":"Running"}},
    {"metadata":{"name":"web-a","namespace":"web","labels":{"app":"web","tier":"front"}},
     "spec":{"nodeName":"k1"},"status":{"phase":"Running"}},
    {"metadata":{"name":"api-a","namespace":"web","labels":{"app":"api"}},
     "spec":{"nodeName":"k1"},"status":{"phase":"Running"}},
    {"metadata":{"name":"trainer-b","namespace":"other","labels":{"app":"trainer"}},
     "spec":{"nodeName":"k1"},"status":{"phase":"Running"}},
    {"metadata":{"name":"trainer-c","namespace":"ml","labels":{"app":"trainer"}},
     "spec":{"nodeName":"k1"},"status":{"phase":"Pending"}},
    {"metadata":{"name":"trainer-d","namespace":"ml","labels":{"app":"trainer"},
                 "deletionTimestamp":"2026-01-01T00:00:00Z"},
     "spec":{"nodeName":"k1"},"status":{"phase":"Running"}},
    {"metadata":{"name":"batch-a","namespace":"batch","labels":{"app":"batch"}},
     "spec":{"nodeName":"k1"},"status":{"phase":"Running"}}]})";
  const char* pdbs = R"({"apiVersion":"v1","kind":"List","items":[
    {"metadata":{"name":"trainer","namespace":"ml"},
     "spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"trainer"}}},
     "status":{"currentHealthy":1,"desiredHealthy":1,"disruptionsAllowed":0,"expectedPods":1}},
    {"metadata":{"name":"front","namespace":"web"},
     "spec":{"maxUnavailable":0,"selector":{"matchExpressions":[
       {"key":"app","operator":"In","values":["web","cache"]},{"key":"tier","operator":"Exists"}]}},
     "status":{"disruptionsAllowed":0}},
    {"metadata":{"name":"api","namespace":"web"},
     "spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"api"}}},
     "status":{"disruptionsAllowed":1}},
    {"metadata":{"name":"fresh","namespace":"batch"},
     "spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"batch"}}}}]})";
  auto budgets = kube::ParseBudgets(pdbs);
  REQUIRE(budgets.ok());
  REQUIRE(budgets->size() == 4);
  CHECK_FALSE((*budgets)[3].disruptions_allowed.has_value());   // no status yet: not judged
  auto n = kube::ParseNodes(nodes);
  REQUIRE(n.ok());
  REQUIRE(kube::AttachPods(*n, pods, &*budgets).ok());
  CHECK(n->at("k1").running_jobs == 7);
  CHECK(n->at("k1").jobs == std::vector<std::string>{
      "ml/trainer-a (PodDisruptionBudget ml/trainer allows no eviction now)",
      "web/web-a (PodDisruptionBudget web/front allows no eviction now)",
      "web/api-a",            // its budget allows one disruption
      "other/trainer-b",      // a budget covers its own namespace only
      "ml/trainer-c",         // Pending: evicted without the budget's say
      "ml/trainer-d",         // already terminating
      "batch/batch-a"});      // the budget has no status yet
  // Selectors: a null one selects nothing, an empty one the whole namespace; NotIn and
  // DoesNotExist as the API defines them.
  kube::Budget b;
  b.ns = "ml";
  CHECK_FALSE(b.Selects("ml", {{"app", "x"}}));
  b.selector = nlohmann::json::object();
  CHECK(b.Selects("ml", {{"app", "x"}}));
  CHECK_FALSE(b.Selects("web", {{"app", "x"}}));
  b.selector = {{"matchExpressions", {{{"key", "app"}, {"operator", "NotIn"}, {"values", {"x"}}},
                                      {{"key", "canary"}, {"operator", "DoesNotExist"}}}}};
  CHECK(b.Selects("ml", {{"app", "y"}}));
  CHECK_FALSE(b.Selects("ml", {{"app", "x"}}));
  CHECK_FALSE(b.Selects("ml", {{"app", "y"}, {"canary", "1"}}));
  CHECK_FALSE(kube::ParseBudgets("[]").ok());

  // Query lists the budgets only when told to (plan); apply's polls never do.
  const std::string k = "kubectl --request-timeout=30s ";
  DrainScriptedShell sh;
  sh.answers[k + "get nodes -o json"] = {0, nodes, ""};
  sh.answers[k + "get pods -A -o json --field-selector=status.phase!=Succeeded,status.phase!=Failed"] = {0, pods, ""};
  sh.answers[k + "get poddisruptionbudgets -A -o json"] = {0, pdbs, ""};
  KubernetesDrainer apply_view(sh);
  auto q = apply_view.Query({});
  REQUIRE(q.ok());
  CHECK(q->at("k1").jobs.front() == "ml/trainer-a");
  CHECK(sh.ran.size() == 2);
  KubernetesDrainer plan_view(sh, std::chrono::seconds(60), BudgetReads::kRead);
  q = plan_view.Query({"k1"});
  REQUIRE(q.ok());
  CHECK(q->at("k1").jobs.front() == "ml/trainer-a (PodDisruptionBudget ml/trainer allows no eviction now)");
  CHECK(sh.ran.back() == k + "get poddisruptionbudgets -A -o json");
  // A budget list that cannot be read fails the view, with kubectl's words.
  sh.answers[k + "get poddisruptionbudgets -A -o json"] =
      {1, "", "Error from server (Forbidden): poddisruptionbudgets.policy is forbidden\n"};
  q = plan_view.Query({});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().message.find("poddisruptionbudgets.policy is forbidden") != std::string::npos);
}

TEST_CASE("slurm drainer: a stack tag is one scontrol update of both feature lists, others kept") {
  DrainScriptedShell sh;
  SlurmDrainer d(sh);
  CHECK(d.ShowsStacks());
  SchedulerNode n;
  n.name = "n1";
  n.features = {"gpu"};
  // The three commands run by hand on the testbed's Slurm 22.05 (set, change, clear).
  const std::string set = SlurmDrainer::StackCommand(n, {"h100-2025q4", "1a2b3c4d5e6f"});
  CHECK(set == "scontrol update nodename='n1' "
               "availablefeatures='gpu,stack_h100-2025q4,stack_commit_1a2b3c4d5e6f' "
               "activefeatures='gpu,stack_h100-2025q4,stack_commit_1a2b3c4d5e6f'");
  n.features = {"gpu", "stack_h100-2025q4", "stack_commit_1a2b3c4d5e6f"};
  CHECK(SlurmDrainer::StackCommand(n, {"a100-2026q1", "0123456789ab"}) ==
        "scontrol update nodename='n1' "
        "availablefeatures='gpu,stack_a100-2026q1,stack_commit_0123456789ab' "
        "activefeatures='gpu,stack_a100-2026q1,stack_commit_0123456789ab'");
  CHECK(SlurmDrainer::StackCommand(n, {}) ==
        "scontrol update nodename='n1' availablefeatures='gpu' activefeatures='gpu'");
  n.features = {"stack_x", "stack_commit_0123456789ab"};
  CHECK(SlurmDrainer::StackCommand(n, {}) ==
        "scontrol update nodename='n1' availablefeatures='' activefeatures=''");
  // With a node_features plugin the active list is a subset: its own activity is kept, and
  // plumb's features are active as well as available.
  n.features = {"knl_quad", "knl_snc2", "stack_x"};
  n.active_features = std::vector<std::string>{"knl_quad", "stack_x"};
  CHECK(SlurmDrainer::StackCommand(n, {"y", "0123456789ab"}) ==
        "scontrol update nodename='n1' "
        "availablefeatures='knl_quad,knl_snc2,stack_y,stack_commit_0123456789ab' "
        "activefeatures='knl_quad,stack_y,stack_commit_0123456789ab'");
  n.active_features.reset();
  n.name = "n1; reboot";
  CHECK(SlurmDrainer::StackCommand(n, {}).find("nodename='n1; reboot' ") != std::string::npos);
  // SetStack runs exactly that; Slurm's refusal is an error naming the node.
  n.name = "n1";
  n.features = {"gpu"};
  sh.answers[set] = {0, "", ""};
  // A node whose features the listing did not show is not rewritten (gpu would be lost).
  auto unknown = d.SetStack(n, {"h100-2025q4", "1a2b3c4d5e6f"});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code == "slurm.stack");
  CHECK(sh.ran.empty());
  n.features_known = true;
  REQUIRE(d.SetStack(n, {"h100-2025q4", "1a2b3c4d5e6f"}).ok());
  CHECK(sh.ran == std::vector<std::string>{set});
  sh.answers[set] = {1, "", "slurm_update error: Invalid node name specified\n"};
  auto bad = d.SetStack(n, {"h100-2025q4", "1a2b3c4d5e6f"});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == "slurm.update");
  CHECK(bad.error().message.find("Invalid node name") != std::string::npos);
  // A controller that cannot be reached is "unavailable", as for a drain.
  sh.answers[set] = {1, "", "slurm_update error: Unable to contact slurm controller (connect failure)\n"};
  auto down = d.SetStack(n, {"h100-2025q4", "1a2b3c4d5e6f"});
  REQUIRE_FALSE(down.ok());
  CHECK(down.error().code == kSchedulerUnavailable);
  // A tag that would write another feature than its own never reaches scontrol.
  sh.ran.clear();
  auto refused = d.SetStack(n, {"a,b", ""});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == "slurm.stack");
  CHECK(sh.ran.empty());
}

TEST_CASE("slurm drainer: query shows each node's stack; stack requests from squeue, JSON or not") {
  DrainScriptedShell sh;
  SlurmDrainer d(sh);
  sh.answers["sinfo --json"] = {0, DrainData("sinfo-22.05-stack.json"), ""};
  sh.answers["squeue --json"] = {0, DrainData("squeue-22.05-stack.json"), ""};
  auto q = d.Query({});
  REQUIRE(q.ok());
  CHECK(q->at("n1").stack_tag == StackTag{"h100-2025q4", "1a2b3c4d5e6f"});
  CHECK(q->at("n1").features.size() == 3);
  CHECK(q->at("n2").stack_tag.empty());
  auto r = d.StackRequests();
  REQUIRE(r.ok());
  REQUIRE(r->size() == 3);
  CHECK((*r)[1].id == "2");
  CHECK((*r)[1].state == "PENDING");
  CHECK((*r)[1].stack == "h100-2025q4");
  // Without --json: squeue's formatted output.
  sh.answers.erase("squeue --json");
  sh.answers[slurm::kStackRequestLinesCommand] = {0, DrainData("squeue-22.05-stack.txt"), ""};
  CHECK(std::string(slurm::kStackRequestLinesCommand) ==
        "squeue -h -t PD,R,CG,CF,S -o '%i|%T|%u|%j|%f'");
  r = d.StackRequests();
  REQUIRE(r.ok());
  CHECK(r->size() == 3);
  CHECK(sh.ran.back() == slurm::kStackRequestLinesCommand);
  // The controller gone: unavailable, whether --json says so or squeue fails.
  sh.answers["squeue --json"] = {0, DrainData("squeue-22.05-controller-down.json"), ""};
  r = d.StackRequests();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == kSchedulerUnavailable);
  sh.answers.erase("squeue --json");
  sh.answers[slurm::kStackRequestLinesCommand] = {
      1, "", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"};
  r = d.StackRequests();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == kSchedulerUnavailable);
}

TEST_CASE("none drainer: shows no stack") {
  NoneDrainer d;
  CHECK_FALSE(d.ShowsStacks());
  CHECK(d.SetStack({}, {"s", "abc"}).ok());
  auto r = d.StackRequests();
  REQUIRE(r.ok());
  CHECK(r->empty());
}

TEST_CASE("kubernetes drainer: a stack tag is two labels, set or removed together, others kept") {
  DrainScriptedShell sh;
  KubernetesDrainer d(sh);
  CHECK(d.ShowsStacks());
  const std::string set = KubernetesDrainer::StackCommand("k1", {"h100-2025q4", "1a2b3c4d5e6f"});
  CHECK(set == "kubectl --request-timeout=30s label node 'k1' --overwrite "
               "'plumb.dev/stack=h100-2025q4' 'plumb.dev/commit=1a2b3c4d5e6f'");
  CHECK(KubernetesDrainer::StackCommand("k1", {}) ==
        "kubectl --request-timeout=30s label node 'k1' 'plumb.dev/stack-' 'plumb.dev/commit-'");
  CHECK(KubernetesDrainer::StackCommand("k1", {"s", ""}) ==
        "kubectl --request-timeout=30s label node 'k1' --overwrite 'plumb.dev/stack=s' 'plumb.dev/commit-'");
  CHECK(KubernetesDrainer::StackCommand("k1", {"", "abc"}) ==
        "kubectl --request-timeout=30s label node 'k1' --overwrite 'plumb.dev/stack-' 'plumb.dev/commit=abc'");
  CHECK(KubernetesDrainer::StackCommand("k1; reboot", {}).find("node 'k1; reboot' ") != std::string::npos);
  SchedulerNode n;
  n.name = "k1";
  sh.answers[set] = {0, "node/k1 labeled\n", ""};
  REQUIRE(d.SetStack(n, {"h100-2025q4", "1a2b3c4d5e6f"}).ok());
  CHECK(sh.ran == std::vector<std::string>{set});
  sh.answers[set] = {1, "", "Unable to connect to the server: dial tcp 127.0.0.1:6443: connect: connection refused\n"};
  auto down = d.SetStack(n, {"h100-2025q4", "1a2b3c4d5e6f"});
  REQUIRE_FALSE(down.ok());
  CHECK(down.error().code == kSchedulerUnavailable);
  sh.ran.clear();
  auto refused = d.SetStack(n, {"a.", ""});   // not a label value
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == "kube.stack");
  CHECK(sh.ran.empty());
  // Read back by ParseNodes, next to labels that are not plumb's.
  auto nodes = kube::ParseNodes(R"({"items":[
    {"metadata":{"name":"k1","labels":{"kubernetes.io/hostname":"k1","plumb.dev/stack":"h100-2025q4",
                                       "plumb.dev/commit":"1a2b3c4d5e6f"}},
     "spec":{},"status":{"conditions":[{"type":"Ready","status":"True"}]}},
    {"metadata":{"name":"k2","labels":{"kubernetes.io/hostname":"k2"}},
     "spec":{},"status":{"conditions":[{"type":"Ready","status":"True"}]}},
    {"metadata":{"name":"k3","labels":{"plumb.dev/commit":"abc"}},
     "spec":{},"status":{"conditions":[{"type":"Ready","status":"True"}]}}]})");
  REQUIRE(nodes.ok());
  CHECK(nodes->at("k1").stack_tag == StackTag{"h100-2025q4", "1a2b3c4d5e6f"});
  CHECK(nodes->at("k2").stack_tag.empty());
  CHECK(nodes->at("k3").stack_tag == StackTag{"", "abc"});
  CHECK(nodes->at("k1").features.empty());
}

TEST_CASE("kubernetes drainer: pods asking for a stack, by nodeSelector or required node affinity") {
  // Synthetic JSON in the shape of `kubectl get pods -A -o json` (v1 Pod: spec.nodeSelector,
  // spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution).
  const char* pods = R"({"kind":"List","items":[
    {"metadata":{"name":"train-a","namespace":"ml"},
     "spec":{"nodeSelector":{"plumb.dev/stack":"h100-2025q4","gpu":"h100"},"nodeName":"k1"},
     "status":{"phase":"Running"}},
    {"metadata":{"name":"eval-b","namespace":"research"},
     "spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
       "nodeSelectorTerms":[
         {"matchExpressions":[{"key":"plumb.dev/stack","operator":"In","values":["a100-2026q1","h100-2025q4"]},
                              {"key":"gpu","operator":"Exists"}]},
         {"matchExpressions":[{"key":"plumb.dev/stack","operator":"NotIn","values":["old"]}]}]}}}},
     "status":{"phase":"Pending"}},
    {"metadata":{"name":"both","namespace":"ml"},
     "spec":{"nodeSelector":{"plumb.dev/stack":"h100-2025q4"},
             "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
               "nodeSelectorTerms":[{"matchExpressions":[
                 {"key":"plumb.dev/stack","operator":"In","values":["h100-2025q4"]}]}]}}}},
     "status":{"phase":"Pending"}},
    {"metadata":{"name":"preferred","namespace":"ml"},
     "spec":{"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
       {"weight":1,"preference":{"matchExpressions":[
         {"key":"plumb.dev/stack","operator":"In","values":["h100-2025q4"]}]}}]}}},
     "status":{"phase":"Pending"}},
    {"metadata":{"name":"commit-only","namespace":"ml"},
     "spec":{"nodeSelector":{"plumb.dev/commit":"1a2b3c4d5e6f"}},"status":{"phase":"Running"}},
    {"metadata":{"name":"done","namespace":"ml"},
     "spec":{"nodeSelector":{"plumb.dev/stack":"h100-2025q4"}},"status":{"phase":"Succeeded"}},
    {"metadata":{"name":"web","namespace":"default"},"spec":{},"status":{"phase":"Running"}}]})";
  auto r = kube::ParseStackRequests(pods);
  REQUIRE(r.ok());
  std::vector<std::string> got;
  for (const auto& x : *r) got.push_back(x.id + "|" + x.user + "|" + x.name + "|" + x.state + "|" + x.stack);
  CHECK(got == std::vector<std::string>{"ml/train-a|ml|train-a|Running|h100-2025q4",
                                        "research/eval-b|research|eval-b|Pending|a100-2026q1",
                                        "research/eval-b|research|eval-b|Pending|h100-2025q4",
                                        "ml/both|ml|both|Pending|h100-2025q4"});
  CHECK_FALSE(kube::ParseStackRequests("[]").ok());
  // Through the drainer: the same pod listing Query reads.
  DrainScriptedShell sh;
  KubernetesDrainer d(sh);
  const std::string get = "kubectl --request-timeout=30s get pods -A -o json "
                          "--field-selector=status.phase!=Succeeded,status.phase!=Failed";
  sh.answers[get] = {0, pods, ""};
  auto viad = d.StackRequests();
  REQUIRE(viad.ok());
  CHECK(viad->size() == 4);
  sh.answers[get] = {1, "", "Unable to connect to the server: EOF\n"};
  viad = d.StackRequests();
  REQUIRE_FALSE(viad.ok());
  CHECK(viad.error().code == kSchedulerUnavailable);
}
