#include "plans/observe/bmc_gather.h"

#include "modules/transport/redfish_client.h"

#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "fakes/fake_redfish.h"
#include "fakes/forward_http.h"
#include "modules/bmc_modules.h"
#include "plans/observe/gather.h"

namespace plumb::plans {

TEST_CASE("bmc gather: every target read in order, unreachable ones reported, all logged out") {
  std::vector<std::unique_ptr<testing::FakeRedfish>> fakes;
  std::vector<BmcTarget> targets;
  for (int i = 0; i < 5; ++i) {
    std::string origin = "https://bmc" + std::to_string(i) + ".example";
    auto f = std::make_unique<testing::FakeRedfish>(origin);
    f->AddSystem({"On", "ForceOff"});
    fakes.push_back(std::move(f));
    targets.push_back({"n" + std::to_string(i), origin, ""});
  }
  // n3's BMC does not answer at all.
  fakes[3]->script["GET /redfish/v1/"].assign(8, Diagnostic::Error("http.connect", "refused"));
  const std::vector<const modules::Module*>& ptrs = modules::BmcModules();
  auto obs = GatherBmc(targets, ptrs, 3, [&](const BmcTarget& t) -> std::unique_ptr<transport::Bmc> {
    size_t i = static_cast<size_t>(t.node[1] - '0');
    transport::RedfishOptions o;
    o.base_url = t.url;
    o.credentials = {"admin", transport::Secret("s3cret-PLANTED")};
    o.sleep = [](std::chrono::milliseconds) {};
    return std::make_unique<transport::RedfishClient>(
        std::make_unique<testing::ForwardHttp>(fakes[i].get()), o);
  });
  REQUIRE(obs.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    CHECK(obs[i].node == targets[i].node);
    if (i == 3) {
      CHECK_FALSE(obs[i].reachable);
      CHECK(obs[i].error.code == "http.connect");
      continue;
    }
    CHECK(obs[i].reachable);
    REQUIRE(obs[i].facts.count("power") == 1);
    CHECK(obs[i].facts.at("power").ok());
    CHECK(obs[i].facts.at("power").value()["power_state"] == "On");
    // No UpdateService in this fake: firmware is a per-module error, not a lost node.
    CHECK_FALSE(obs[i].facts.at("firmware").ok());
    CHECK(fakes[i]->sessions_created == 1);
    CHECK(fakes[i]->sessions_deleted == 1);
  }
  auto j = ToJson(obs[0]);
  CHECK(j["facts"]["power"]["power_state"] == "On");
  CHECK(j["errors"].contains("firmware"));
  CHECK(ToJson(obs[3])["error"]["code"] == "http.connect");
}

}  // namespace plumb::plans

namespace plumb {

TEST_CASE("bmc gather: BMC facts join the nodes read in-band; an unreachable BMC is each BMC module's error") {
  const auto& mods = modules::BmcModules();
  REQUIRE(!mods.empty());
  plans::ObservedState observed;
  for (const char* n : {"n1", "n2", "n3"}) {
    plans::NodeObservation o;
    o.node = n;
    o.reachable = std::string(n) != "n2";
    o.facts_digest = std::string("sha256:inband-") + n;
    observed.nodes[n] = o;
  }
  std::vector<plans::BmcObservation> bmc(3);
  bmc[0].node = "n1";
  bmc[0].reachable = true;
  bmc[0].facts.emplace("firmware", Result<modules::Facts>(nlohmann::json{{"BMC", "1.0"}}));
  bmc[1].node = "n2";   // its OS was not read: the plan leaves it out whole, BMC facts or not
  bmc[1].reachable = true;
  bmc[1].facts.emplace("firmware", Result<modules::Facts>(nlohmann::json{{"BMC", "1.0"}}));
  bmc[2].node = "n3";
  bmc[2].error = Diagnostic::Error("redfish.connect", "connection refused");
  plans::MergeBmcObservations(std::move(bmc), mods, observed);

  REQUIRE(observed.nodes["n1"].facts.count("firmware") == 1);
  CHECK(observed.nodes["n1"].facts.at("firmware").ok());
  CHECK(observed.nodes["n1"].facts_digest == "sha256:inband-n1");   // the in-band digest stays
  CHECK(observed.nodes["n2"].facts.empty());
  for (const modules::Module* m : mods) {
    CAPTURE(std::string(m->Name()));
    auto it = observed.nodes["n3"].facts.find(std::string(m->Name()));
    REQUIRE(it != observed.nodes["n3"].facts.end());
    REQUIRE_FALSE(it->second.ok());
    CHECK(it->second.error().message == "BMC unreachable: connection refused");
  }
  // Targets: only nodes that name a BMC.
  inventory::Node a, b;
  a.name = "a";
  a.bmc = "https://127.0.0.1:8443";
  a.bmc_system = "System.Embedded.1";
  b.name = "b";
  auto targets = plans::BmcTargetsOf({&a, &b});
  REQUIRE(targets.size() == 1);
  CHECK(targets[0].node == "a");
  CHECK(targets[0].system == "System.Embedded.1");
}

}  // namespace plumb

// ---- gather + BMC at once, and snapshots without BMC facts (issue 32) ----------------------

namespace plumb::plans {
namespace {

// An in-band module whose facts are its raw section.
class RawModule : public modules::Module {
 public:
  RawModule() { info_.name = "raw"; }
  const modules::ModuleInfo& Info() const override { return info_; }
  std::string ProbeScript() const override { return "echo raw"; }
  Result<modules::Facts> ParseProbe(std::string_view out, int) const override {
    return modules::Facts{{"out", std::string(out)}};
  }
  std::vector<modules::Action> Diff(const nlohmann::json&, const modules::Facts&) const override {
    return {};
  }

 private:
  modules::ModuleInfo info_;
};

const std::string kNonce = "00112233445566778899aabbccddeeff";

// Two sides that must both have started before either may finish: done sequentially, the
// first waits for the second in vain and says so (after a minute, on the failing path only).
struct Rendezvous {
  std::mutex mu;
  std::condition_variable cv;
  bool ssh_started = false, bmc_started = false;
  bool Meet(bool& mine, const bool& theirs) {
    std::unique_lock<std::mutex> lock(mu);
    mine = true;
    cv.notify_all();
    return cv.wait_for(lock, std::chrono::seconds(60), [&] { return theirs; });
  }
};

struct RendezvousShells : ShellFactory {
  Rendezvous* r;
  std::atomic<int> met_bmc{0};
  struct Shell : transport::Shell {
    RendezvousShells* f;
    Result<transport::CommandOutput> Run(std::string_view, std::chrono::milliseconds) override {
      if (f->r->Meet(f->r->ssh_started, f->r->bmc_started)) ++f->met_bmc;
      const std::string mk = "@plumb:" + kNonce + ":";
      transport::CommandOutput o;
      o.out = mk + "begin raw\nraw\n" + mk + "end raw 0\n";
      return o;
    }
  };
  std::unique_ptr<transport::Shell> Open(const inventory::Node&) override {
    auto s = std::make_unique<Shell>();
    s->f = this;
    return s;
  }
};

}  // namespace

TEST_CASE("gather with BMC: the BMCs are read while the nodes are, and join their nodes' facts") {
  RawModule raw;
  std::vector<const modules::Module*> mods = {&raw};
  for (const modules::Module* m : modules::BmcModules()) mods.push_back(m);
  inventory::Node n1, n2;
  n1.name = "n1";
  n1.bmc = "https://bmc1.example";
  n2.name = "n2";   // no BMC
  testing::FakeRedfish fake("https://bmc1.example");
  fake.AddSystem({"On", "ForceOff"});
  Rendezvous r;
  RendezvousShells shells;
  shells.r = &r;
  std::atomic<int> opened{0}, met_ssh{0};
  OpenBmc open = [&](const BmcTarget& t) -> std::unique_ptr<transport::Bmc> {
    ++opened;
    if (r.Meet(r.bmc_started, r.ssh_started)) ++met_ssh;
    transport::RedfishOptions o;
    o.base_url = t.url;
    o.credentials = {"admin", transport::Secret("s3cret-PLANTED")};
    o.sleep = [](std::chrono::milliseconds) {};
    return std::make_unique<transport::RedfishClient>(std::make_unique<testing::ForwardHttp>(&fake), o);
  };
  GatherOptions opt;
  opt.nonce = kNonce;
  opt.fanout = 1;   // one node at a time on the SSH side: only the BMC side can overlap it
  ObservedState s = GatherWithBmc({&n1, &n2}, mods, shells, opt, nullptr, open);
  CHECK(opened == 1);   // n2 names no BMC
  CHECK(met_ssh == 1);  // the BMC was read while a node's probe ran (sequential: never met)
  CHECK(shells.met_bmc >= 1);
  REQUIRE(s.nodes.size() == 2);
  const NodeObservation& o1 = s.nodes.at("n1");
  REQUIRE(o1.facts.count("power") == 1);
  CHECK(o1.facts.at("power").value()["power_state"] == "On");
  CHECK(o1.facts.at("raw").ok());
  // The digest is the in-band one: apply's stale check re-probes over SSH only.
  std::map<std::string, Result<modules::Facts>> in_band;
  in_band.emplace("raw", o1.facts.at("raw"));
  CHECK(o1.facts_digest == FactsDigest(in_band));
  CHECK(s.nodes.at("n2").facts.count("power") == 0);
  CHECK(fake.sessions_deleted == fake.sessions_created);

  SUBCASE("no opener (no credentials, --no-bmc): in-band only, nothing opened") {
    Rendezvous r2;
    r2.bmc_started = true;   // nothing to wait for
    shells.r = &r2;
    ObservedState t = GatherWithBmc({&n1, &n2}, mods, shells, opt, nullptr, {});
    CHECK(opened == 1);
    CHECK(t.nodes.at("n1").facts.count("power") == 0);
  }
}

TEST_CASE("a snapshot without BMC facts leaves a node with a BMC unread there, never in sync") {
  const auto& bmc_mods = modules::BmcModules();
  inventory::Node a, b, c, d;
  a.name = "a";
  a.bmc = "https://a-bmc.example";
  b.name = "b";   // no BMC: nothing to miss
  c.name = "c";
  c.bmc = "https://c-bmc.example";
  d.name = "d";
  d.bmc = "https://d-bmc.example";
  UnreadBmcFacts unread({&a, &b, &c, &d}, bmc_mods);

  NodeObservation oa;
  oa.node = "a";
  oa.reachable = true;
  oa.facts.emplace("raw", modules::Facts{{"out", "x"}});
  const std::string digest = FactsDigest(oa.facts);   // as gather wrote it: in-band only
  NodeObservation ob = oa, oc = oa, od;
  ob.node = "b";
  oc.node = "c";
  oc.facts.emplace("firmware", modules::Facts{{"components", nlohmann::json::array()}});
  oc.facts_digest = "sha256:recorded";
  od.node = "d";
  od.reachable = false;   // unreadable already

  unread.Mark(oa);
  unread.Mark(ob);
  unread.Mark(oc);
  unread.Mark(od);
  for (const modules::Module* m : bmc_mods) {
    const std::string name(m->Name());
    CAPTURE(name);
    REQUIRE(oa.facts.count(name) == 1);
    REQUIRE_FALSE(oa.facts.at(name).ok());
    CHECK(oa.facts.at(name).error().code == "facts.bmc-unread");
    CHECK(ob.facts.count(name) == 0);
    CHECK(od.facts.count(name) == 0);
  }
  CHECK(oa.facts_digest == digest);   // computed before the marks, as the snapshot's would be
  CHECK(oc.facts.at("firmware").ok());   // read: kept
  CHECK_FALSE(oc.facts.at("bios").ok());
  CHECK(oc.facts_digest == "sha256:recorded");
  // What the planner sees: a BMC module with an error, which makes a node that pins it
  // unreadable (plan: no verdict, exit 1) instead of a key no module of the run checked.
  NodeFacts nf = ToNodeFacts(std::move(oa));
  REQUIRE(nf.module_errors.count("firmware") == 1);
  CHECK(nf.module_errors.at("firmware").find("facts.bmc-unread") != std::string::npos);
}

}  // namespace plumb::plans
