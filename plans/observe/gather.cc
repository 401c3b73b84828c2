#include "plans/observe/gather.h"

#include <algorithm>
#include <ctime>
#include <exception>
#include <mutex>

#include <fmt/format.h>

#include "modules/probe_script.h"
#include "plans/core/clock.h"
#include "plans/core/digest.h"
#include "plans/core/parallel.h"

namespace plumb::plans {
namespace {

using SteadyClock = std::chrono::steady_clock;


std::string Replace(std::string s, std::string_view from, std::string_view to) {
  if (from.empty()) return s;
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
  }
  return s;
}

// Last `n` bytes of a stream, for error messages about a failed probe.
std::string Tail(const std::string& s, size_t n) {
  std::string t = s.size() > n ? "..." + s.substr(s.size() - n) : s;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  return t;
}

std::vector<const modules::Module*> InBand(const std::vector<const modules::Module*>& modules) {
  std::vector<const modules::Module*> out;
  for (const auto* m : modules) {
    if (m != nullptr && !m->ProbeScript().empty()) out.push_back(m);
  }
  return out;
}

NodeObservation ProbeWithScript(const std::string& node, transport::Shell& shell,
                                const std::vector<const modules::Module*>& modules,
                                const std::string& script, const std::string& nonce,
                                std::chrono::milliseconds timeout,
                                const std::string* last_raw_digest = nullptr,
                                bool* unchanged = nullptr, bool repeated = false) {
  NodeObservation obs;
  obs.node = node;
  auto t0 = SteadyClock::now();
  auto finish = [&] {
    obs.elapsed_s = std::chrono::duration<double>(SteadyClock::now() - t0).count();
    if (obs.reachable) obs.facts_digest = FactsDigest(obs.facts);
    return obs;
  };
  // A node read again and again (watch) runs the probe on its command loop: one request and
  // one reply on a channel kept open.
  auto ran = repeated ? shell.RunRepeated(script, timeout) : shell.Run(script, timeout);
  if (!ran.ok()) {
    obs.error = ran.error();
    return finish();
  }
  if (last_raw_digest != nullptr && unchanged != nullptr && ran->exit_status == 0 &&
      (ran->out == modules::UnchangedLine(nonce) ||
       Sha256Hex(Replace(ran->out, nonce, "NONCE")) == *last_raw_digest)) {
    // Byte for byte what the node printed last time (the node said so, or it printed it
    // again), and parsers are pure: the facts are the caller's already.
    *unchanged = true;
    obs.reachable = true;
    obs.raw_digest = *last_raw_digest;
    obs.elapsed_s = std::chrono::duration<double>(SteadyClock::now() - t0).count();
    return obs;
  }
  obs.raw_digest = Sha256Hex(Replace(ran->out, nonce, "NONCE"));
  if (modules.empty()) {  // nothing to probe: the round trip only proved the node answers
    obs.reachable = true;
    return finish();
  }
  std::vector<std::string> expected;
  for (const modules::Module* m : modules) expected.emplace_back(m->Name());
  modules::ProbeSplit split = modules::SplitProbeOutput(ran->out, nonce, expected);
  if (split.sections.empty()) {
    // Not one marker: the script never ran as written (no POSIX sh, a login banner on stdout
    // that ate it, the session died at once). The node answered but could not be read.
    std::string err = Tail(ran->err, 300);
    obs.error = Diagnostic::Error(
        "probe.output",
        fmt::format("{}: the probe printed no section markers (exit {}{}{})", node,
                    ran->exit_status, err.empty() ? "" : ", stderr: ", err),
        {}, {}, "is the login shell POSIX, and does the node's /bin/sh exist?");
    return finish();
  }
  obs.reachable = true;
  for (const modules::Module* m : modules) {
    std::string name(m->Name());
    auto it = split.sections.find(name);
    if (it == split.sections.end()) {
      obs.facts.emplace(name, Diagnostic::Error("probe." + name,
                                                fmt::format("{}: no '{}' section in the probe "
                                                            "output",
                                                            node, name)));
      continue;
    }
    if (!it->second.complete) {
      obs.facts.emplace(name, Diagnostic::Error("probe." + name,
                                                fmt::format("{}: the '{}' section was cut short "
                                                            "(exit {})",
                                                            node, name, ran->exit_status)));
      continue;
    }
    // Parsers are pure and must not throw; a bug in one must still not take the run down.
    try {
      obs.facts.emplace(name, m->ParseProbe(it->second.out, it->second.exit_status));
    } catch (const std::exception& e) {
      obs.facts.emplace(name, Diagnostic::Error("probe." + name,
                                                fmt::format("{}: parser failed: {}", node, e.what())));
    }
  }
  return finish();
}

}  // namespace

std::string NewNonce() { return modules::NewProbeNonce(); }

NodeObservation ProbeNode(const std::string& node, transport::Shell& shell,
                          const std::vector<const modules::Module*>& modules,
                          std::chrono::milliseconds timeout, const std::string& nonce) {
  std::string n = nonce.empty() ? NewNonce() : nonce;
  auto in_band = InBand(modules);
  auto script = modules::BuildProbeScript(in_band, n);
  if (!script.ok()) {
    NodeObservation obs;
    obs.node = node;
    obs.error = script.error();
    return obs;
  }
  return ProbeWithScript(node, shell, in_band, *script, n, timeout);
}

NodeObservation ProbeNodeIfChanged(const std::string& node, transport::Shell& shell,
                                   const std::vector<const modules::Module*>& modules,
                                   std::chrono::milliseconds timeout,
                                   const std::string& last_raw_digest, bool* unchanged) {
  *unchanged = false;
  const std::string nonce = NewNonce();
  auto in_band = InBand(modules);
  auto script = modules::BuildProbeScript(in_band, nonce);
  if (script.ok()) script = modules::WrapReprobe(*script, nonce, last_raw_digest);
  if (!script.ok()) {
    NodeObservation obs;
    obs.node = node;
    obs.error = script.error();
    return obs;
  }
  return ProbeWithScript(node, shell, in_band, *script, nonce, timeout,
                         last_raw_digest.empty() ? nullptr : &last_raw_digest, unchanged, /*repeated=*/true);
}

ObservedState Gather(const std::vector<const inventory::Node*>& nodes,
                     const std::vector<const modules::Module*>& modules, ShellFactory& shells,
                     const GatherOptions& options, ProgressObserver* progress) {
  ObservedState state;
  state.gathered_at = Rfc3339(std::chrono::system_clock::now());
  if (nodes.empty()) return state;

  // One script for every node: built once, the nonce fresh per run so no node's output can
  // forge another section's markers.
  const std::string nonce = options.nonce.empty() ? NewNonce() : options.nonce;
  const auto in_band = InBand(modules);
  auto built = modules::BuildProbeScript(in_band, nonce);
  if (!built.ok()) {  // a programming error (bad nonce or module name): every node says so
    for (const auto* n : nodes) {
      NodeObservation obs;
      obs.node = n->name;
      obs.error = built.error();
      state.nodes.emplace(n->name, std::move(obs));
    }
    return state;
  }
  const std::string& script = *built;

  std::vector<NodeObservation> results(nodes.size());
  std::mutex progress_mu;
  size_t done = 0;
  ForEachBounded(nodes.size(), options.fanout, [&](size_t i) {
    const inventory::Node& node = *nodes[i];
    std::unique_ptr<transport::Shell> shell = shells.Open(node);
    if (shell == nullptr) {
      results[i].node = node.name;
      results[i].error = Diagnostic::Error("ssh.io", node.name + ": no shell for this node");
    } else {
      results[i] = ProbeWithScript(node.name, *shell, in_band, script, nonce,
                                   options.command_timeout);
      shell.reset();  // close the session now: at most `fanout` are open at once
    }
    if (progress != nullptr) {
      std::lock_guard<std::mutex> lock(progress_mu);
      progress->OnNodeDone(results[i], ++done, nodes.size());
    }
  });

  for (auto& r : results) {
    std::string name = r.node;
    state.nodes.insert_or_assign(std::move(name), std::move(r));
  }
  return state;
}

std::vector<const modules::Module*> ModulesToRead(
    const std::vector<const modules::Module*>& all,
    const std::map<std::string, inventory::NodeDesired>& desired) {
  std::vector<const modules::Module*> out;
  for (const modules::Module* m : all) {
    bool needed = !m->Info().IsHealth();
    for (auto it = desired.begin(); !needed && it != desired.end(); ++it)
      needed = m->Wants(*it->second.desired);
    if (needed) out.push_back(m);
  }
  return out;
}

}  // namespace plumb::plans
