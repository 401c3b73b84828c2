// Gather with fake shells: the fan-out bound, the one-script/one-round-trip contract, section
// splitting (through a real /bin/sh), per-node errors and the facts digest.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "plans/observe/gather.h"
#include "plans/core/digest.h"
#include "plans/observe/observed.h"
#include "plans/observe/snapshot_prefetch.h"
#include "modules/probe_script.h"
#include "modules/registry.h"

using namespace plumb;
using namespace std::chrono_literals;

namespace {

// A module whose facts echo its section, so a test sees exactly what the parser got.
class EchoModule : public modules::Module {
 public:
  EchoModule(std::string name, std::string probe) : name_(std::move(name)), probe_(std::move(probe)) {
    info_.name = name_;
  }
  EchoModule(const EchoModule&) = delete;   // info_ points into this object
  const modules::ModuleInfo& Info() const override { return info_; }
  std::string ProbeScript() const override { return probe_; }
  // Facts: {"status": section status, "<part>": {"text":..., "status":...}...}
  Result<modules::Facts> ParseProbe(std::string_view out, int status) const override {
    auto parts = modules::ParseFramedParts(out);
    if (!parts.ok()) return parts.error();
    modules::Facts f{{"status", status}};
    for (const auto& p : *parts) {
      if (p.text == "FAIL") return Diagnostic::Error("probe." + name_, "unexpected output");
      if (p.text == "PART")   // read in part: the facts stay, the part that failed is listed
        f[modules::kPartErrorsKey] = {{{"part", p.name}, {"code", "probe." + name_}, {"message", "tool: garbled"}}};
      f[p.name] = {{"text", p.text}, {"status", p.exit_status}};
    }
    return f;
  }
  std::vector<modules::Action> Diff(const nlohmann::json&, const modules::Facts&) const override {
    return {};
  }

 private:
  std::string name_, probe_;
  modules::ModuleInfo info_;
};

// Runs the command with the local /bin/sh: the combined script is really executed.
class BashShell : public transport::Shell {
 public:
  Result<transport::CommandOutput> Run(std::string_view command, std::chrono::milliseconds) override {
    ++runs;
    std::string cmd = env_prefix + "/bin/sh -c " + transport::ShellQuote(command);
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    transport::CommandOutput out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.out.append(buf, n);
    int st = pclose(p);
    out.exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : 255;
    last_out = out.out;
    return out;
  }
  Result<transport::CommandOutput> RunRepeated(std::string_view command, std::chrono::milliseconds t) override {
    ++repeated_runs;
    return Run(command, t);
  }
  int runs = 0;
  int repeated_runs = 0;   ///< of `runs`, those asked for as RunRepeated (a command loop)
  std::string last_out;
  std::string env_prefix;   ///< e.g. "env PATH=/nowhere ": a node without sha256sum or sed
};

// Answers with canned output (or a canned error) and records concurrency.
struct FakeFactory : plans::ShellFactory {
  struct Shell : transport::Shell {
    FakeFactory* f;
    std::string node;
    Result<transport::CommandOutput> Run(std::string_view command,
                                         std::chrono::milliseconds) override {
      int now = ++f->active;
      int prev = f->max_active.load();
      while (now > prev && !f->max_active.compare_exchange_weak(prev, now)) {}
      std::this_thread::sleep_for(f->delay);
      --f->active;
      std::lock_guard<std::mutex> lock(f->mu);
      f->runs[node]++;
      f->scripts.insert(std::string(command));
      if (auto it = f->errors.find(node); it != f->errors.end()) return it->second;
      transport::CommandOutput o;
      o.out = f->reply(node);
      return o;
    }
  };
  std::unique_ptr<transport::Shell> Open(const inventory::Node& n) override {
    auto s = std::make_unique<Shell>();
    s->f = this;
    s->node = n.name;
    return s;
  }
  std::function<std::string(const std::string&)> reply = [](const std::string&) { return ""; };
  std::map<std::string, Diagnostic> errors;
  std::chrono::milliseconds delay{0};
  std::atomic<int> active{0}, max_active{0};
  std::mutex mu;
  std::map<std::string, int> runs;
  std::set<std::string> scripts;
};

std::vector<inventory::Node> MakeNodes(int n) {
  std::vector<inventory::Node> nodes(n);
  for (int i = 0; i < n; ++i) {
    nodes[i].name = "gpu" + std::to_string(100 + i);
    nodes[i].address = nodes[i].name + ".pod-a.example";
  }
  return nodes;
}

std::vector<const inventory::Node*> Ptrs(const std::vector<inventory::Node>& v) {
  std::vector<const inventory::Node*> p;
  for (const auto& n : v) p.push_back(&n);
  return p;
}

// A module's section as the probe script prints it, with one part "p" holding `body`.
std::string Section(const std::string& nonce, const std::string& m, const std::string& body, int st) {
  std::string mk = "@plumb:" + nonce + ":";
  return mk + "begin " + m + "\n\n" + mk + "part p\n" + body + "\n" + mk + "endpart p 0\n\n" +
         mk + "end " + m + " " + std::to_string(st) + "\n";
}

const std::string kGatherNonce = "00112233445566778899aabbccddeeff";

}  // namespace

TEST_CASE("the combined probe script runs every snippet once and splits back exactly") {
  EchoModule a("alpha", "plumb_begin x; echo one; echo two; plumb_end x 0");
  EchoModule b("beta", "plumb_run y printf 'no newline'");
  EchoModule c("gamma", "plumb_run z true");                  // prints nothing
  EchoModule d("delta", "plumb_run w sh -c 'echo partial; exit 7'; exit 5");  // exits
  EchoModule e("eps", "plumb_run v echo '@plumb:0000000000000000:end eps 0'");  // forged marker
  EchoModule f("phi", "plumb_run u no-such-tool-here");      // absent tool
  EchoModule none("bmc_only", "");                            // no in-band probe: skipped
  BashShell sh;
  auto obs = plans::ProbeNode("n1", sh, {&a, &b, &c, &d, &e, &f, &none}, 5s, kGatherNonce);
  CHECK(sh.runs == 1);  // one round trip
  CHECK(sh.repeated_runs == 0);   // a one-off read: a plain Run, no loop left on the node
  REQUIRE(obs.reachable);
  CHECK(obs.facts.size() == 6);
  CHECK(obs.facts.count("bmc_only") == 0);
  CHECK(obs.facts.at("alpha")->at("x").at("text") == "one\ntwo\n");
  CHECK(obs.facts.at("beta")->at("y").at("text") == "no newline");
  CHECK(obs.facts.at("gamma")->at("z").at("text") == "");
  CHECK(obs.facts.at("delta")->at("w").at("text") == "partial\n");
  CHECK(obs.facts.at("delta")->at("w").at("status") == 7);
  CHECK(obs.facts.at("delta")->at("status") == 5);  // the snippet's own exit, and no harm done
  CHECK(obs.facts.at("eps")->at("v").at("text") == "@plumb:0000000000000000:end eps 0\n");
  CHECK(obs.facts.at("phi")->at("u").at("status") == modules::kPartAbsent);
  CHECK(obs.facts_digest.rfind("sha256:", 0) == 0);
  CHECK(obs.raw_digest.size() == 64);
}

TEST_CASE("a re-probe that prints what it printed last time is not parsed again (watch)") {
  // The probe reads a file the test changes: the same bytes twice, then different ones.
  char path[] = "/tmp/plumb-ifchanged-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  auto write = [&](const char* text) { std::ofstream(path) << text; };
  write("one\n");
  EchoModule a("alpha", std::string("plumb_cat x ") + path);
  BashShell sh;
  bool unchanged = true;
  auto first = plans::ProbeNodeIfChanged("n1", sh, {&a}, 5s, "", &unchanged);
  REQUIRE(first.reachable);
  CHECK_FALSE(unchanged);
  CHECK(first.facts.at("alpha")->at("x").at("text") == "one\n");
  // Fresh nonces each time, yet the same output: the node (this host's sh, sha256sum and sed)
  // says so in one short line; the facts are left to the caller.
  auto second = plans::ProbeNodeIfChanged("n1", sh, {&a}, 5s, first.raw_digest, &unchanged);
  CHECK(unchanged);
  CHECK(second.reachable);
  CHECK(second.facts.empty());
  CHECK(second.raw_digest == first.raw_digest);
  CHECK(sh.last_out.size() == std::string("@plumb::unchanged\n").size() + 32);
  CHECK(sh.last_out.find(":unchanged") != std::string::npos);
  write("two\n");
  auto third = plans::ProbeNodeIfChanged("n1", sh, {&a}, 5s, first.raw_digest, &unchanged);
  CHECK_FALSE(unchanged);
  CHECK(third.facts.at("alpha")->at("x").at("text") == "two\n");
  CHECK(sh.runs == 3);
  CHECK(sh.repeated_runs == 3);   // every re-read goes to the node's command loop

  // A node without sha256sum (or sed) prints its output whole; the client tells it is the same.
  write("one\n");
  BashShell bare;
  bare.env_prefix = "env PATH=/nowhere ";
  auto fallback = plans::ProbeNodeIfChanged("n1", bare, {&a}, 5s, first.raw_digest, &unchanged);
  CHECK(unchanged);
  CHECK(fallback.raw_digest == first.raw_digest);
  CHECK(bare.last_out.find(":unchanged") == std::string::npos);
  CHECK(bare.last_out.find(":begin alpha") != std::string::npos);
  std::remove(path);
}

TEST_CASE("a node whose output is cut short or has no markers is reported, not parsed") {
  EchoModule a("alpha", "plumb_run x true");
  EchoModule b("beta", "plumb_run y true");
  FakeFactory f;
  plans::GatherOptions opt;
  opt.nonce = kGatherNonce;
  auto nodes = MakeNodes(3);
  f.reply = [](const std::string& node) -> std::string {
    if (node == "gpu100") return Section(kGatherNonce, "alpha", "x", 0) + "@plumb:" + kGatherNonce + ":begin beta\nhal";
    if (node == "gpu101") return "Welcome to the node!\n";
    return Section("ffffffffffffffff", "alpha", "x", 0);  // another run's nonce is content
  };
  auto st = plans::Gather(Ptrs(nodes), {&a, &b}, f, opt);
  REQUIRE(st.nodes.at("gpu100").reachable);
  CHECK(st.nodes.at("gpu100").facts.at("alpha").ok());
  CHECK(st.nodes.at("gpu100").facts.at("beta").error().message.find("cut short") != std::string::npos);
  CHECK(!st.nodes.at("gpu101").reachable);
  CHECK(st.nodes.at("gpu101").error.code == "probe.output");
  CHECK(!st.nodes.at("gpu102").reachable);
}

TEST_CASE("gather never runs more than `fanout` nodes at once, and uses all of them") {
  auto nodes = MakeNodes(40);
  EchoModule a("alpha", "echo a");
  FakeFactory f;
  f.delay = 15ms;
  plans::GatherOptions opt;
  opt.fanout = 4;
  opt.nonce = kGatherNonce;
  f.reply = [](const std::string& node) { return Section(kGatherNonce, "alpha", node, 0); };
  auto st = plans::Gather(Ptrs(nodes), {&a}, f, opt);
  CHECK(st.nodes.size() == 40);
  CHECK(f.max_active.load() <= 4);
  CHECK(f.max_active.load() >= 2);  // it is parallel at all
  for (const auto& [name, runs] : f.runs) CHECK(runs == 1);
  CHECK(f.scripts.size() == 1);  // one script for every node
  CHECK(st.nodes.at("gpu123").facts.at("alpha")->at("p").at("text") == "gpu123");
}

TEST_CASE("a fresh nonce per run") {
  auto nodes = MakeNodes(1);
  EchoModule a("alpha", "echo a");
  FakeFactory f;
  plans::Gather(Ptrs(nodes), {&a}, f, {});
  plans::Gather(Ptrs(nodes), {&a}, f, {});
  CHECK(f.scripts.size() == 2);
  CHECK(plans::NewNonce().size() == 32);
}

TEST_CASE("per-node failures are recorded, the others are read, progress sees every node") {
  auto nodes = MakeNodes(6);
  EchoModule a("alpha", "echo a");
  EchoModule b("beta", "echo b");
  FakeFactory f;
  f.errors.emplace("gpu101", Diagnostic::Error("ssh.refused", "gpu101: connection refused"));
  f.errors.emplace("gpu102", Diagnostic::Error("ssh.hostkey", "gpu102: unknown host key"));
  f.reply = [](const std::string& node) -> std::string {
    if (node == "gpu103") return "motd only\n";                 // no markers
    if (node == "gpu104") return Section(kGatherNonce, "alpha", "FAIL", 0);  // parser error, no beta
    return Section(kGatherNonce, "alpha", "1", 0) + Section(kGatherNonce, "beta", "2", 0);
  };
  struct Counter : plans::ProgressObserver {
    std::vector<size_t> done;
    void OnNodeDone(const plans::NodeObservation&, size_t d, size_t total) override {
      CHECK(total == 6);
      done.push_back(d);
    }
  } progress;
  plans::GatherOptions opt;
  opt.nonce = kGatherNonce;
  opt.fanout = 3;
  auto st = plans::Gather(Ptrs(nodes), {&a, &b}, f, opt, &progress);
  CHECK(progress.done.size() == 6);
  CHECK(progress.done.back() == 6);
  CHECK(!st.nodes.at("gpu101").reachable);
  CHECK(st.nodes.at("gpu101").error.code == "ssh.refused");
  CHECK(st.nodes.at("gpu102").error.code == "ssh.hostkey");
  CHECK(!st.nodes.at("gpu103").reachable);
  CHECK(st.nodes.at("gpu103").error.code == "probe.output");
  CHECK(st.nodes.at("gpu104").reachable);
  CHECK(st.nodes.at("gpu104").facts.at("alpha").error().code == "probe.alpha");
  CHECK(st.nodes.at("gpu104").facts.at("beta").error().code == "probe.beta");
  CHECK(st.nodes.at("gpu100").facts.at("beta")->at("p").at("text") == "2");
  CHECK(st.UnreachableCount() == 3);
  CHECK(st.ProbeErrorCount() == 1);
}

TEST_CASE("a module read in part counts as a module error, keeps its facts, through a snapshot too") {
  auto nodes = MakeNodes(2);
  EchoModule a("alpha", "echo a");
  EchoModule b("beta", "echo b");
  FakeFactory f;
  f.reply = [](const std::string& node) -> std::string {
    return Section(kGatherNonce, "alpha", node == "gpu101" ? "PART" : "1", 0) + Section(kGatherNonce, "beta", "2", 0);
  };
  plans::GatherOptions opt;
  opt.nonce = kGatherNonce;
  auto st = plans::Gather(Ptrs(nodes), {&a, &b}, f, opt);
  CHECK(st.UnreachableCount() == 0);
  CHECK(st.ProbeErrorCount() == 1);
  CHECK(st.nodes.at("gpu100").ModuleErrorCount() == 0);
  CHECK(st.nodes.at("gpu101").ModuleErrorCount() == 1);
  auto check_node = [](const plans::NodeObservation& o) {
    plans::NodeFacts nf = plans::ToNodeFacts(o);
    CHECK(nf.facts["alpha"]["p"]["text"] == "PART");   // what was read is kept
    REQUIRE(nf.module_errors.count("alpha") == 1);
    CHECK(nf.module_errors.at("alpha") == "probe.alpha: tool: garbled");
    CHECK(nf.module_errors.count("beta") == 0);
  };
  check_node(st.nodes.at("gpu101"));
  auto back = plans::ObservedStateFromJson(plans::ToJson(st));
  REQUIRE(back.ok());
  CHECK(back->ProbeErrorCount() == 1);
  check_node(back->nodes.at("gpu101"));
}

TEST_CASE("the facts digest is canonical: order-free, stable through JSON, sensitive to values") {
  std::map<std::string, Result<modules::Facts>> f1, f2;
  f1.emplace("kernel", modules::Facts{{"release", "5.15.0"}, {"boot_id", "x"}});
  f1.emplace("sysctl", modules::Facts{{"vm.swappiness", 10}});
  f2.emplace("sysctl", modules::Facts{{"vm.swappiness", 10}});
  f2.emplace("kernel", modules::Facts::parse(R"({"boot_id":"x","release":"5.15.0"})"));
  CHECK(plans::FactsDigest(f1) == plans::FactsDigest(f2));
  // Golden value: the canonical form must not change silently between versions, or every
  // saved plan would look stale.
  CHECK(plans::FactsDigest(f1) ==
        "sha256:" + plans::Sha256Hex(R"({"kernel":{"boot_id":"x","release":"5.15.0"},)"
                                     R"("sysctl":{"vm.swappiness":10}})"));

  plans::NodeObservation n;
  n.node = "gpu001";
  n.reachable = true;
  n.facts = f1;
  n.facts.emplace("ofed", Diagnostic::Error("probe.ofed", "ofed_info: not found"));
  n.facts_digest = plans::FactsDigest(n.facts);
  plans::ObservedState s;
  s.nodes["gpu001"] = n;
  plans::NodeObservation down;
  down.node = "gpu002";
  down.error = Diagnostic::Error("ssh.timeout", "gpu002: connect timed out");
  s.nodes["gpu002"] = down;
  auto back = plans::ObservedStateFromJson(nlohmann::json::parse(plans::ToJson(s).dump()));
  REQUIRE(back.ok());
  CHECK(plans::FactsDigest(back->nodes.at("gpu001").facts) == n.facts_digest);
  CHECK(back->nodes.at("gpu001").facts.at("ofed").error().code == "probe.ofed");
  CHECK(back->nodes.at("gpu002").error.code == "ssh.timeout");
  CHECK(!back->nodes.at("gpu002").reachable);

  f2.at("sysctl") = modules::Facts{{"vm.swappiness", 60}};
  CHECK(plans::FactsDigest(f1) != plans::FactsDigest(f2));
}

TEST_CASE("a snapshot that is not one is refused with a diagnostic") {
  CHECK(plans::ObservedStateFromJson(nlohmann::json{{"nodes", {}}}).error().code ==
        "facts.snapshot");
  auto bad = plans::ObservedStateFromJson(
      nlohmann::json{{"format", "plumb.observed/v1"}, {"nodes", {{"n1", {{"facts", {}}}}}}});
  CHECK(!bad.ok());
}

TEST_CASE("the streamed snapshot is the same document as ToJson, one line per node") {
  plans::ObservedState s;
  s.gathered_at = "2026-11-29T23:59:01Z";
  plans::NodeObservation up;
  up.node = "gpu001";
  up.reachable = true;
  up.facts.emplace("kernel", modules::Facts{{"release", "5.15.0-119-generic"}});
  up.facts.emplace("ofed", Diagnostic::Error("probe.ofed", "ofed_info: not found"));
  up.facts_digest = plans::FactsDigest(up.facts);
  s.nodes["gpu001"] = up;
  plans::NodeObservation down;
  down.node = "gpu002";
  down.error = Diagnostic::Error("ssh.refused", "gpu002: connection refused");
  s.nodes["gpu002"] = down;

  std::ostringstream out;
  plans::WriteObservedStateJson(s, out, {{"summary", {{"nodes", 2}}}});
  auto parsed = nlohmann::json::parse(out.str());
  auto expected = plans::ToJson(s);
  expected["summary"] = {{"nodes", 2}};
  CHECK(parsed == expected);
  CHECK(out.str().find("\n  \"gpu002\": {") != std::string::npos);  // a line per node
  auto back = plans::ObservedStateFromJson(parsed);
  REQUIRE(back.ok());
  CHECK(back->nodes.at("gpu001").facts_digest == up.facts_digest);

  plans::ObservedState empty;
  CHECK(nlohmann::json::parse([&] { std::ostringstream o; plans::WriteObservedStateJson(empty, o); return o.str(); }()) ==
        plans::ToJson(empty));
}

namespace {

plans::ObservedState ThreeNodeSnapshot() {
  plans::ObservedState s;
  s.gathered_at = "2026-11-30T01:00:00Z";
  for (const char* name : {"gpu001", "gpu002", "gpu003"}) {
    plans::NodeObservation n;
    n.node = name;
    n.reachable = true;
    n.facts.emplace("kernel", modules::Facts{{"release", std::string("5.15.0-") + name}});
    n.facts.emplace("ofed", Diagnostic::Error("probe.ofed", "ofed_info: not found"));
    n.facts_digest = plans::FactsDigest(n.facts);
    s.nodes[name] = n;
  }
  s.nodes["gpu002"].reachable = false;
  s.nodes["gpu002"].facts.clear();
  s.nodes["gpu002"].facts_digest.clear();
  s.nodes["gpu002"].error = Diagnostic::Error("ssh.timeout", "gpu002: connect timed out");
  return s;
}

std::string GatherTempPath(const std::string& stem) {
  return (std::filesystem::temp_directory_path() /
          (stem + "-" + std::to_string(::getpid()) + ".json")).string();
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc | std::ios::binary) << text;
}

}  // namespace

TEST_CASE("a snapshot file is read one node at a time, each as soon as its object is parsed") {
  const plans::ObservedState s = ThreeNodeSnapshot();
  const std::string path = GatherTempPath("plumb-snapshot-stream");
  REQUIRE(plans::WriteObservedState(s, path).ok());

  std::vector<plans::NodeObservation> got;
  auto header = plans::ReadObservedState(path, [&](plans::NodeObservation&& n) {
    got.push_back(std::move(n));
  });
  REQUIRE(header.ok());
  CHECK(header->gathered_at == s.gathered_at);
  CHECK(header->nodes.empty());   // the nodes went to the sink, not into the header
  REQUIRE(got.size() == 3);
  CHECK(got[0].node == "gpu001");
  CHECK(got[1].node == "gpu002");
  CHECK(!got[1].reachable);
  CHECK(got[1].error.code == "ssh.timeout");
  CHECK(plans::FactsDigest(got[2].facts) == s.nodes.at("gpu003").facts_digest);
  CHECK(got[2].facts.at("ofed").error().code == "probe.ofed");

  // The whole-file reader is the same sink collecting into a map: equal to parsing the file.
  auto whole = plans::ReadObservedState(path);
  REQUIRE(whole.ok());
  std::ifstream in(path);
  auto tree = plans::ObservedStateFromJson(nlohmann::json::parse(in));
  REQUIRE(tree.ok());
  CHECK(plans::ToJson(*whole) == plans::ToJson(*tree));

  // Cut the file after gpu002's line: the first two nodes were handed over while the parser
  // had not yet seen the rest (streamed, not read whole), and the broken file is an error.
  std::ostringstream full;
  plans::WriteObservedStateJson(s, full);
  const std::string text = full.str();
  WriteText(path, text.substr(0, text.find("\n  \"gpu003\"")));
  got.clear();
  auto cut = plans::ReadObservedState(path, [&](plans::NodeObservation&& n) { got.push_back(std::move(n)); });
  CHECK(got.size() == 2);
  REQUIRE(!cut.ok());
  CHECK(cut.error().code == "facts.snapshot");
  CHECK(cut.error().message.find("not valid JSON") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("a streamed snapshot that is not one is refused, naming the file and the node") {
  const std::string path = GatherTempPath("plumb-snapshot-bad");
  int calls = 0;
  auto read = [&](const std::string& text) {
    WriteText(path, text);
    return plans::ReadObservedState(path, [&](plans::NodeObservation&&) { ++calls; });
  };
  struct Case { const char* text; const char* message; };
  const Case cases[] = {
      {R"({"nodes": {}})", "is not a facts snapshot"},
      {R"({"format": "plumb.observed/v0", "nodes": {}})", "is not a facts snapshot"},
      {R"([{"format": "plumb.observed/v1", "nodes": {}}])", "is not a facts snapshot"},
      {R"({"format": "plumb.observed/v1"})", "'nodes' is missing or not an object"},
      {R"({"format": "plumb.observed/v1", "nodes": [{"reachable": true}]})",
       "'nodes' is missing or not an object"},
      {R"({"format": "plumb.observed/v1", "nodes": {"gpu001": 5}})", "node 'gpu001' is not an object"},
      {R"({"format": "plumb.observed/v1", "nodes": {"gpu001": {"reachable": false}}})",
       "node 'gpu001' is unreachable but has no 'error'"},
      {R"({"format": "plumb.observed/v1", "nodes": {"gpu001": {"facts": {}}}})", "node 'gpu001'"},
      {R"({"format": "plumb.observed/v1", "nodes": {"gpu001": {"reachable": tru)", "not valid JSON"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    auto r = read(c.text);
    REQUIRE(!r.ok());
    CHECK(r.error().code == "facts.snapshot");
    CHECK(r.error().message.find(c.message) != std::string::npos);
  }
  CHECK(calls == 0);   // a broken node stops the hand-over; none of these had a good node
  std::remove(path.c_str());
  CHECK(plans::ReadObservedState("/nonexistent/plumb/facts.json", [](plans::NodeObservation&&) {})
            .error().message.find("cannot read") != std::string::npos);
}

TEST_CASE("plumb's one-line-per-node layout and any other layout read the same; layout errors name the line") {
  const plans::ObservedState s = ThreeNodeSnapshot();
  const std::string path = GatherTempPath("plumb-snapshot-layouts");
  auto collect = [&](std::vector<std::string>* names) {
    return plans::ReadObservedState(path, [&](plans::NodeObservation&& n) {
      if (names) names->push_back(n.node);
    });
  };
  std::ostringstream out;
  plans::WriteObservedStateJson(s, out, {{"summary", {{"read", 2}}}});
  const std::string plumb_layout = out.str();
  REQUIRE(plumb_layout.rfind("{\n\"format\": ", 0) == 0);   // the layout the fast path reads

  WriteText(path, plumb_layout);
  auto fast = plans::ReadObservedState(path);
  REQUIRE(fast.ok());
  // The same document re-indented (as `jq .` would) goes the streamed path.
  WriteText(path, nlohmann::json::parse(plumb_layout).dump(4));
  auto streamed = plans::ReadObservedState(path);
  REQUIRE(streamed.ok());
  CHECK(plans::ToJson(*fast) == plans::ToJson(*streamed));
  CHECK(plans::ToJson(*fast) == plans::ToJson(s));

  // Nodes come in file order on the calling thread, however many threads parse them.
  plans::ObservedState many;
  for (int i = 0; i < 1000; ++i) {
    plans::NodeObservation n = s.nodes.at("gpu001");
    n.node = fmt::format("n{:04}", i);
    many.nodes[n.node] = n;
  }
  REQUIRE(plans::WriteObservedState(many, path).ok());
  std::vector<std::string> order;
  REQUIRE(collect(&order).ok());
  REQUIRE(order.size() == 1000);
  CHECK(std::is_sorted(order.begin(), order.end()));
  CHECK(order.front() == "n0000");

  // A broken node line: the error names the file and the line, and no later node is passed on.
  std::string broken = plumb_layout;
  const size_t at = broken.find("\"reachable\":false");
  REQUIRE(at != std::string::npos);   // gpu002's line (line 6: {, format, gathered_at, nodes, gpu001, gpu002)
  broken.replace(at, 17, "\"reachable\":\"no\"");
  WriteText(path, broken);
  order.clear();
  auto bad = collect(&order);
  REQUIRE(!bad.ok());
  CHECK(bad.error().where.file == path);
  CHECK(bad.error().where.line == 6);
  CHECK(bad.error().message.find("line 6") != std::string::npos);
  CHECK(bad.error().message.find("gpu002") != std::string::npos);
  CHECK(order == std::vector<std::string>{"gpu001"});

  // A line that is not a node inside "nodes", and a file cut inside "nodes".
  std::string stray = plumb_layout;
  stray.insert(stray.find("  \"gpu003\""), "oops\n");
  WriteText(path, stray);
  auto s2 = collect(nullptr);
  REQUIRE(!s2.ok());
  CHECK(s2.error().where.line == 7);
  WriteText(path, plumb_layout.substr(0, plumb_layout.find("\n}")));
  auto cut = collect(nullptr);
  REQUIRE(!cut.ok());
  CHECK(cut.error().message.find("ends inside \"nodes\"") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("a snapshot read ahead on a background thread hands over every node, in order, on Drain") {
  const plans::ObservedState s = ThreeNodeSnapshot();
  const std::string path = GatherTempPath("plumb-snapshot-prefetch");
  plans::ObservedState many;
  for (int i = 0; i < 600; ++i) {
    plans::NodeObservation n = s.nodes.at("gpu001");
    n.node = fmt::format("n{:04}", i);
    many.nodes[n.node] = n;
  }
  many.gathered_at = s.gathered_at;
  REQUIRE(plans::WriteObservedState(many, path).ok());
  const std::thread::id caller = std::this_thread::get_id();

  for (size_t ahead : {size_t{1}, size_t{7}, size_t{5000}}) {
    CAPTURE(ahead);
    plans::SnapshotPrefetch prefetch(path, ahead, 1u << 30, 1);
    std::vector<std::string> order;
    bool on_caller = true;
    auto header = prefetch.Drain([&](plans::NodeObservation&& n) {
      on_caller = on_caller && std::this_thread::get_id() == caller;
      CHECK(n.facts.at("kernel").ok());
      order.push_back(n.node);
    });
    REQUIRE(header.ok());
    CHECK(header->gathered_at == s.gathered_at);
    REQUIRE(order.size() == 600);
    CHECK(std::is_sorted(order.begin(), order.end()));
    CHECK(on_caller);
  }

  // In batches: never empty, never more than asked, in file order, on the caller's thread.
  for (size_t most : {size_t{1}, size_t{16}, size_t{10000}}) {
    CAPTURE(most);
    plans::SnapshotPrefetch prefetch(path, 64, 1u << 30, 2);
    std::vector<std::string> order;
    bool on_caller = true;
    auto header = prefetch.DrainInBatches(most, [&](std::vector<plans::NodeObservation>&& batch) {
      on_caller = on_caller && std::this_thread::get_id() == caller;
      CHECK(!batch.empty());
      CHECK(batch.size() <= std::min<size_t>(most, 64));   // at most what was read ahead
      for (plans::NodeObservation& n : batch) order.push_back(n.node);
    });
    REQUIRE(header.ok());
    REQUIRE(order.size() == 600);
    CHECK(std::is_sorted(order.begin(), order.end()));
    CHECK(on_caller);
  }

  // A byte budget smaller than one node's text still lets one node through at a time.
  {
    plans::SnapshotPrefetch prefetch(path, 5000, 1, 1);
    std::vector<std::string> order;
    auto header = prefetch.Drain([&](plans::NodeObservation&& n) {
      CHECK(n.source_bytes > 100);   // the node's line, as read
      order.push_back(n.node);
    });
    REQUIRE(header.ok());
    CHECK(order.size() == 600);
    CHECK(std::is_sorted(order.begin(), order.end()));
  }

  // Another layout (re-indented) goes the same way.
  WriteText(path, plans::ToJson(many).dump(1));
  {
    plans::SnapshotPrefetch prefetch(path, 4, 1u << 30, 0);
    size_t count = 0;
    REQUIRE(prefetch.Drain([&](plans::NodeObservation&&) { ++count; }).ok());
    CHECK(count == 600);
  }

  // A broken line: Drain returns the located error; no node after it was handed over (the
  // caller discards its work on an error, so nodes still in flight may be dropped too).
  std::ostringstream out;
  plans::WriteObservedStateJson(many, out);
  std::string broken = out.str();
  const size_t at = broken.find("  \"n0300\"");
  REQUIRE(at != std::string::npos);
  broken.insert(at, "junk\n");
  WriteText(path, broken);
  {
    plans::SnapshotPrefetch prefetch(path, 16, 1u << 30, 1);
    size_t count = 0;
    auto r = prefetch.Drain([&](plans::NodeObservation&&) { ++count; });
    REQUIRE(!r.ok());
    CHECK(r.error().where.line == 305);   // {, format, gathered_at, nodes, then n0000..n0299
    CHECK(count <= 300);
  }

  // Never drained (the repo did not load, say): the reader stops instead of waiting forever
  // on its full queue, and the destructor returns.
  REQUIRE(plans::WriteObservedState(many, path).ok());
  { plans::SnapshotPrefetch abandoned(path, 1, 1u << 30, 1); }
  { plans::SnapshotPrefetch abandoned_by_bytes(path, 1000, 1, 1); }
  std::remove(path.c_str());
}

TEST_CASE("gather: health modules are read only where some node pins them") {
  const auto& all = modules::AllModules();
  std::map<std::string, inventory::NodeDesired> desired;
  desired["n1"].desired = nlohmann::json{{"kernel", "6.8.0"}};
  auto names = [](const std::vector<const modules::Module*>& ms) {
    std::set<std::string> out;
    for (const modules::Module* m : ms) out.emplace(m->Name());
    return out;
  };
  auto read = names(plans::ModulesToRead(all, desired));
  CHECK(read.count("kernel") == 1);
  CHECK(read.count("os") == 1);   // facts-only modules are always read
  CHECK(read.count("gpu_health") == 0);
  CHECK(read.count("ib_health") == 0);
  desired["n2"].desired = nlohmann::json{{"health", {{"gpu_health", {{"max_uncorrected_ecc", 0}}}}}};
  read = names(plans::ModulesToRead(all, desired));
  CHECK(read.count("gpu_health") == 1);
  CHECK(read.count("ib_health") == 0);
  CHECK(read.size() == all.size() - 3);   // ib_health, dcgm and nccl_bw: no node pins them
}
