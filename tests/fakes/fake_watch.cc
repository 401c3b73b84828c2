#include "fakes/fake_watch.h"

#include <fmt/format.h>

#include "modules/probe_script.h"
#include "plans/core/digest.h"

namespace plumb::fakes {
namespace {

// The shell a WatchFleet hands out: forwards to the fleet, counts its own closing.
class WatchShell final : public transport::Shell {
 public:
  WatchShell(WatchFleet& fleet, std::string node) : fleet_(fleet), node_(std::move(node)) {}
  ~WatchShell() override { ++fleet_.closed[node_]; }
  Result<transport::CommandOutput> Run(std::string_view command,
                                       std::chrono::milliseconds) override {
    return fleet_.RunOn(node_, command);
  }

 private:
  WatchFleet& fleet_;
  std::string node_;
};

std::string NonceOf(std::string_view script) {
  const std::string_view tag = "M='@plumb:";
  size_t at = script.find(tag);
  if (at == std::string_view::npos) return {};
  at += tag.size();
  return std::string(script.substr(at, script.find('\'', at) - at));
}

}  // namespace

void WatchFleet::At(plans::Clock::TimePoint at, std::function<void(WatchFleet&)> change) {
  changes_.emplace_back(at, std::move(change));
}

std::unique_ptr<transport::Shell> WatchFleet::Open(const inventory::Node& node) {
  ++opened[node.name];
  return std::make_unique<WatchShell>(*this, node.name);
}

std::vector<WatchFleet::Call> WatchFleet::CallsOf(const std::string& node) const {
  std::vector<Call> out;
  for (const Call& c : calls)
    if (node.empty() || c.node == node) out.push_back(c);
  return out;
}

std::string WatchFleet::ProbeOutput(const std::string& name, std::string_view script) const {
  const WatchNode& n = nodes_.at(name);
  const std::string m = "@plumb:" + NonceOf(script);
  auto part = [&m](const std::string& part, const std::string& text) {
    return fmt::format("\n{}:part {}\n{}\n{}:endpart {} 0\n", m, part, text, m, part);
  };
  std::string out;
  if (script.find("begin kernel") != std::string_view::npos) {
    out += m + ":begin kernel\n";
    out += part("release", n.release + "\n") + part("boot_id", n.boot_id + "\n") + part("pm", "dpkg\n");
    out += "\n" + m + ":end kernel 0\n";
  }
  if (script.find("begin sysctl") != std::string_view::npos) {
    std::string values;
    for (const auto& [k, v] : n.sysctl) values += k + " = " + v + "\n";
    out += m + ":begin sysctl\n" + part("values", values) + "\n" + m + ":end sysctl 0\n";
  }
  return out;
}

Result<transport::CommandOutput> WatchFleet::RunOn(const std::string& node, std::string_view command) {
  const plans::Clock::TimePoint now = clock_.Now();
  // Changes due by now happen before the node answers, in the order they were set.
  for (auto it = changes_.begin(); it != changes_.end();) {
    if (it->first <= now) {
      auto change = std::move(it->second);
      it = changes_.erase(it);
      change(*this);
    } else {
      ++it;
    }
  }
  const WatchNode& n = nodes_.at(node);
  calls.push_back({node, now, std::string(command), n.down.empty()});
  if (!n.down.empty()) return Diagnostic::Error(n.down, node + ": " + n.down);
  transport::CommandOutput out;
  out.out = ProbeOutput(node, command);
  // What the node's sha256sum does in the wrapped re-probe (modules::WrapReprobe): the digest
  // the client sent, if the output (nonce aside) still has it, means "unchanged".
  const std::string nonce = NonceOf(command);
  const size_t at = command.find("sha256sum)\" = '");
  if (!n.no_sha256sum && at != std::string_view::npos) {
    std::string said(command.substr(at + 15, 64));
    std::string text = out.out;
    for (size_t p = text.find(nonce); p != std::string::npos; p = text.find(nonce, p + 5))
      text.replace(p, nonce.size(), "NONCE");
    if (plans::Sha256Hex(text) == said) out.out = modules::UnchangedLine(nonce);
  }
  return out;
}

std::string MemoryRepo::Commit(const std::string& label, std::map<std::string, std::string> files) {
  std::string id = plans::Sha256Hex(label).substr(0, 40);
  commits_[id] = std::move(files);
  return id;
}

Result<std::string> MemoryRepo::Resolve() {
  if (resolve_fails) return Diagnostic::Error("source.unknown-ref", "ref 'main' not found");
  return head;
}

std::unique_ptr<inventory::LoadedCluster> MemoryRepo::Load(const std::string& commit) {
  ++loads;
  auto it = commits_.find(commit);
  inventory::MemorySource src(it == commits_.end() ? std::map<std::string, std::string>{}
                                                   : it->second);
  return std::make_unique<inventory::LoadedCluster>(
      inventory::LoadClusterFrom(src, inventory::Source{"mem", "main", commit, false}));
}

Status EventLog::Emit(const plans::watch::WatchEvent& e) {
  events.push_back(e);
  if (on_event) on_event(e);
  return OkStatus();
}

std::vector<std::string> EventLog::Lines() const {
  std::vector<std::string> out;
  for (const auto& e : events) {
    std::string line = plans::watch::EventKindName(e.kind);
    if (!e.node.empty()) line += " " + e.node;
    if (!e.key.empty()) line += " " + e.key;
    out.push_back(line);
  }
  return out;
}

}  // namespace plumb::fakes
