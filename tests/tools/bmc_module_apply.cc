// bmc_module_apply: a test tool, never shipped. It calls the Redfish modules' Apply (firmware,
// bios, power) straight against BMCs listed in a file, with a desired state from a JSON file, or
// resets one of them: what `plumb bmc apply --targets --desired` and `plumb bmc reset --targets`
// did before every change to a node went through the engine (issue 31: one door). The Redfish integration tests use it to exercise each module's
// Apply against the emulator's vendor mockups without SSH nodes, a cluster repo or a scheduler;
// the engine's own path is tested by tests/integration/apply_bmc_rolling.sh.
//
//   bmc_module_apply apply --targets bmcs.txt [--node N]... --desired FILE
//   bmc_module_apply reset NODE --targets bmcs.txt [--type reboot|hard-reboot|on|off|force-off]
//                    (--ca FILE | --fingerprint sha256:..) --credentials file:/path|env:VAR
//                    [--auth auto|session|basic] [--timeout S] [--per-bmc N] [--format json] [-v]
//                    [--task-timeout 45m|90s]
// Prints "node: summary  [disruption]" and "  -> outcome: message" per action (or JSON), and exits
// 0 (every change done or staged), 1 (a change failed) or 3 (some BMC or module unreadable).
// Waits print "plumb: NODE: waiting for ..." lines (a new state, or every PLUMB_HEARTBEAT_S) so
// tests see the client's progress; SIGINT/SIGTERM cancel the wait, the session is deleted, what
// was in flight is said and the tool exits 130, as the engine's Ctrl-C does for a step.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "inventory/node_pattern.h"
#include "inventory/version.h"
#include "modules/bmc_modules.h"
#include "modules/module.h"
#include "modules/transport/cancel_signal.h"
#include "modules/transport/credentials.h"
#include "modules/transport/curl_http_client.h"
#include "modules/transport/redfish_client.h"

using namespace plumb;

namespace {

struct Target {
  std::string node, url, system;
};

transport::CancelSignal* g_cancel = nullptr;   // set before the handler is installed

extern "C" void OnSignal(int) {
  if (g_cancel) g_cancel->Set();   // async-signal-safe
}

// A progress line when the state changes, else at most every PLUMB_HEARTBEAT_S (default 30 s).
void ShowProgress(const transport::WaitProgress& p) {
  static std::string last;
  static std::chrono::steady_clock::time_point said;
  const char* hb = std::getenv("PLUMB_HEARTBEAT_S");
  const std::chrono::seconds beat(hb && std::atoi(hb) > 0 ? std::atoi(hb) : 30);
  const std::string key = p.node + "\n" + p.what + "\n" + p.state;
  const auto now = std::chrono::steady_clock::now();
  if (key == last && now - said < beat) return;
  last = key;
  said = now;
  std::fprintf(stderr, "plumb: %s%swaiting for %s\n", p.node.c_str(), p.node.empty() ? "" : ": ",
               p.Text().c_str());
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "bmc_module_apply: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Test tool: the Redfish modules' Apply against listed BMCs");
  std::string targets_file, desired_file, ca, fingerprint, credentials, auth = "auto", format = "text";
  std::string verb, reset_node, reset_type = "reboot", task_timeout = "45m";
  std::vector<std::string> nodes;
  int timeout_s = 60;
  long per_bmc = 4;
  bool verbose = false;
  app.add_option("verb", verb)->required()->check(CLI::IsMember({"apply", "reset"}));
  app.add_option("reset_node", reset_node, "the node to reset");
  app.add_option("--type", reset_type);
  app.add_option("--targets", targets_file)->required();
  app.add_option("--node,--limit", nodes);
  app.add_option("--desired", desired_file);
  app.add_option("--ca", ca);
  app.add_option("--fingerprint", fingerprint);
  app.add_option("--credentials", credentials)->required();
  app.add_option("--auth", auth);
  app.add_option("--timeout", timeout_s);
  app.add_option("--task-timeout", task_timeout);
  app.add_option("--per-bmc", per_bmc);
  app.add_option("--fanout");
  app.add_option("--format", format);
  app.add_flag("-v,--verbose", verbose);
  CLI11_PARSE(app, argc, argv);

  std::vector<Target> targets;
  {
    std::ifstream in(targets_file);
    if (!in) return Fail("cannot read " + targets_file);
    for (std::string line; std::getline(in, line);) {
      std::istringstream ls(line);
      Target t;
      if (!(ls >> t.node >> t.url) || t.node[0] == '#') continue;
      for (std::string word; ls >> word;)
        if (word.rfind("system=", 0) == 0) t.system = word.substr(7);
      if (verb == "reset") nodes = {reset_node};
      bool wanted = nodes.empty();
      for (const auto& p : nodes) wanted = wanted || inventory::NodePattern(p).Matches(t.node);
      if (wanted) targets.push_back(t);
    }
  }
  if (verb == "apply" && desired_file.empty()) return Fail("apply needs --desired");
  std::ifstream din(verb == "apply" ? desired_file : "/dev/null");
  std::stringstream dss;
  dss << din.rdbuf();
  const nlohmann::json desired =
      verb == "apply" ? nlohmann::json::parse(dss.str(), nullptr, false) : nlohmann::json::object();
  if (desired.is_discarded()) return Fail(desired_file + " is not valid JSON");
  if (verb == "reset" && targets.size() != 1) return Fail("no target named " + reset_node);

  const auto task_s = inventory::ParseDuration(task_timeout);
  if (!task_s || *task_s <= 0) return Fail("--task-timeout " + task_timeout + ": not a duration");
  transport::CancelSignal cancel;
  g_cancel = &cancel;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  auto creds = transport::LoadCredentials(credentials);
  if (!creds.ok()) return Fail(creds.error().ToString());
  transport::TlsOptions tls;
  tls.ca_file = fingerprint.empty() ? ca : "";
  tls.fingerprint = fingerprint;
  transport::CurlEngineOptions eo;
  eo.max_host_connections = per_bmc;
  auto engine = transport::StartCurlEngine(eo);

  bool partial = false, failed = false;
  nlohmann::json report = nlohmann::json::array();
  for (const Target& t : targets) {
    transport::RedfishOptions o;
    o.base_url = t.url;
    o.system = t.system;
    o.node = t.node;
    o.credentials = creds.value();
    o.auth = auth == "basic"     ? transport::BmcAuth::kBasic
             : auth == "session" ? transport::BmcAuth::kSession
                                 : transport::BmcAuth::kAuto;
    o.request_timeout = std::chrono::seconds(timeout_s);
    o.task_deadline = std::chrono::seconds(*task_s);
    o.cancel = &cancel;
    o.progress = ShowProgress;
    if (verbose) o.log = [](const std::string& m) { std::fprintf(stderr, "note: %s\n", m.c_str()); };
    auto bmc_ptr = std::make_unique<transport::RedfishClient>(transport::NewCurlHttpClient(engine, tls), o);
    transport::RedfishClient& bmc = *bmc_ptr;
    if (verb == "reset") {
      static const std::map<std::string, transport::ResetKind> kinds = {
          {"reboot", transport::ResetKind::kReboot},
          {"hard-reboot", transport::ResetKind::kHardReboot},
          {"on", transport::ResetKind::kOn}, {"off", transport::ResetKind::kOff},
          {"force-off", transport::ResetKind::kForceOff}};
      auto k = kinds.find(reset_type);
      if (k == kinds.end()) return Fail("unknown --type " + reset_type);
      auto sys = bmc.SystemLink();
      if (!sys.ok()) return Fail(sys.error().ToString());
      auto r = bmc.Reset(sys.value(), k->second);
      if (!r.ok()) return Fail(r.error().ToString());
      std::printf("%s: reset (%s): sent %s\n", t.node.c_str(), reset_type.c_str(), r.value().c_str());
      return 0;
    }
    nlohmann::json node = {{"node", t.node}, {"actions", nlohmann::json::array()}};
    for (const modules::Module* m : modules::BmcModules()) {
      if (!m->Wants(desired)) continue;
      auto facts = m->ProbeBmc(bmc);
      if (!facts.ok()) {
        std::fprintf(stderr, "plumb: %s: %s\n", t.node.c_str(), facts.error().ToString().c_str());
        partial = true;
        continue;
      }
      for (const modules::Action& a : m->Diff(desired, facts.value())) {
        nlohmann::json aj = a.ToJson();
        if (format != "json")
          std::printf("%s: %s  [%s]\n", t.node.c_str(), a.summary.c_str(),
                      modules::DisruptionName(a.disruption));
        modules::NodeContext ctx;
        ctx.bmc = &bmc;
        nlohmann::json in_flight;   // what the BMC accepted, if it then ran long
        ctx.in_flight = [&](const nlohmann::json& f) { in_flight = f; };
        const modules::ApplyOutcome out = m->Apply(ctx, a);
        if (!out.ok() && out.error().code == transport::kCancelledCode) {
          // Stopped waiting: the BMC carries on with what it accepted. The session is deleted
          // (the client's destructor) before the tool says so and exits.
          std::string task = in_flight.is_object() ? in_flight.value("task", "") : "";
          if (task.empty() && in_flight.is_object()) task = in_flight.value("monitor", "");
          bmc_ptr.reset();
          std::fprintf(stderr, "plumb: interrupted: %s: %s %s\n", t.node.c_str(), a.summary.c_str(),
                       in_flight.is_object()
                           ? ("was in flight (" + (task.empty() ? std::string("no task link") : "task " + task) +
                              "): the BMC carries on with it").c_str()
                           : ("was under way: " + out.error().message).c_str());
          return 130;
        }
        if (out.ok()) {
          aj["outcome"] = modules::ApplyOutcomeName(out.kind);
          aj["said"] = out.message;
          if (format != "json")
            std::printf("  -> %s: %s\n", modules::ApplyOutcomeName(out.kind), out.message.c_str());
        } else {
          aj["error"] = out.error().ToJson();
          std::fprintf(stderr, "plumb: %s: %s\n", t.node.c_str(), out.error().ToString().c_str());
          failed = true;
        }
        node["actions"].push_back(aj);
      }
    }
    report.push_back(node);
  }
  if (format == "json") std::printf("%s\n", nlohmann::json{{"nodes", report}}.dump(1).c_str());
  std::fflush(stdout);
  return failed ? 1 : partial ? 3 : 0;
}
