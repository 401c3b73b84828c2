#include "fakes/fake_cluster.h"

#include <sstream>

#include <fmt/format.h>

#include "plans/core/digest.h"

namespace plumb::fakes {
namespace {

class FakeNodeShell final : public transport::Shell {
 public:
  FakeNodeShell(FakeCluster& c, std::string node) : c_(c), node_(std::move(node)) {}
  Result<transport::CommandOutput> Run(std::string_view command,
                                       std::chrono::milliseconds) override {
    return c_.RunOn(node_, command);
  }

 private:
  FakeCluster& c_;
  std::string node_;
};

}  // namespace

FakeNode& FakeCluster::Add(const std::string& name, std::map<std::string, std::string> values) {
  std::lock_guard lock(mu_);
  FakeNode n;
  n.name = name;
  n.running = values;
  n.installed = values;
  return nodes_[name] = n;
}

void FakeCluster::RunJob(const std::string& node, std::chrono::seconds d) {
  std::lock_guard lock(mu_);
  nodes_.at(node).job_until = clock_.Now() + d;
}

void FakeCluster::Log(const std::string& node, const std::string& what) {
  calls_.push_back(node + ": " + what);
}

std::vector<std::string> FakeCluster::calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

std::vector<std::string> FakeCluster::CallsOf(const std::string& node) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  const std::string prefix = node + ": ";
  for (const auto& c : calls_)
    if (c.rfind(prefix, 0) == 0) out.push_back(c.substr(prefix.size()));
  return out;
}

int FakeCluster::Count(const std::string& node, const std::string& prefix) const {
  int n = 0;
  for (const auto& c : CallsOf(node))
    if (c.rfind(prefix, 0) == 0) ++n;
  return n;
}

std::vector<std::string> FakeCluster::violations() const {
  std::lock_guard lock(mu_);
  return violations_;
}

void FakeCluster::TickLocked(FakeNode& n) {
  const auto now = clock_.Now();
  if (n.other_drain_at != plans::Clock::TimePoint{} && now >= n.other_drain_at) {
    n.other_drain_at = {};
    n.drain = true;
    n.reason = "plumb:" + other_run + ":drain";
    n.reason_since = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    n.release_at = now + other_holds;
    n.comment = modules::WithClaim(n.comment, {});
    Log(n.name, "drain " + n.reason);
    CountOutLocked();
  }
  if (n.other_unclaim_at != plans::Clock::TimePoint{} && now >= n.other_unclaim_at) {
    n.other_unclaim_at = {};
    n.comment = modules::WithClaim(n.comment, {});
  }
  if (n.release_at != plans::Clock::TimePoint{} && clock_.Now() >= n.release_at) {
    n.release_at = {};
    n.drain = false;
    n.reason.clear();
    Log(n.name, "resume (other run)");
  }
  if (n.rebooting && !n.never_returns && clock_.Now() >= n.up_at) {
    n.rebooting = false;
    ++n.boot;
    n.running = n.installed;
    CountOutLocked();
  }
}

void FakeCluster::CountOutLocked() {
  int out = 0;
  for (auto& [name, n] : nodes_)
    if (n.drain || n.rebooting) ++out;
  max_out_ = std::max(max_out_, out);
}

Result<std::map<std::string, modules::SchedulerNode>> FakeCluster::Query(
    const std::vector<std::string>& names) {
  std::lock_guard lock(mu_);
  if (clock_.Now() < scheduler_down_until)
    return Diagnostic::Error(std::string(modules::kSchedulerUnavailable),
                             "sinfo --json reported errors: Unspecified error (errno -1)");
  std::map<std::string, modules::SchedulerNode> out;
  for (auto& [name, n] : nodes_) {
    if (!names.empty() && std::find(names.begin(), names.end(), name) == names.end()) continue;
    TickLocked(n);
    modules::SchedulerNode s;
    s.name = name;
    const bool job = clock_.Now() < n.job_until;
    s.running_jobs = job ? 1 : 0;
    if (job) {
      s.jobs.push_back("42 (alice: train)");
      s.job_details.push_back(
          {"42", "alice", "train",
           std::chrono::duration_cast<std::chrono::seconds>(n.job_until.time_since_epoch()).count()});
    }
    s.drain = n.drain;
    s.drained = n.drain && !job;
    s.down = n.rebooting || n.admin_down;
    s.reason = n.reason;
    s.reason_since = n.reason_since;
    s.comment = n.comment;
    s.claim = modules::FindClaim(n.comment);
    s.stack_tag = n.tag;
    s.state = n.rebooting ? "down*" : n.admin_down ? "down" : n.drain ? (job ? "draining" : "drained") : job ? "mixed" : "idle";
    if (auto u = unresponsive_until.find(name); u != unresponsive_until.end() && clock_.Now() < u->second) {
      s.down = s.unresponsive = true;
      s.state += "*";
    }
    out[name] = s;
  }
  return out;
}

Status FakeCluster::Evict(const std::string& node) {
  std::lock_guard lock(mu_);
  if (clock_.Now() < scheduler_down_until) {
    ++calls_while_down;
    return Diagnostic::Error(std::string(modules::kSchedulerUnavailable), "the API does not answer");
  }
  auto& n = nodes_.at(node);
  ++n.evictions;
  if (n.evictable && n.drain && clock_.Now() < n.job_until) n.job_until = clock_.Now();
  return OkStatus();
}

Status FakeCluster::Drain(const std::string& node, const std::string& reason) {
  std::lock_guard lock(mu_);
  if (auto down = SchedulerDownLocked()) return *down;
  auto& n = nodes_.at(node);
  n.drain = true;
  n.reason = reason;
  const long long now_s =
      std::chrono::duration_cast<std::chrono::seconds>(clock_.Now().time_since_epoch()).count();
  n.reason_since = now_s;
  Log(node, "drain " + reason);
  if (auto it = other_run_drains.find(node); it != other_run_drains.end()) {
    auto& o = nodes_.at(it->second);
    o.drain = true;
    o.reason = "plumb:" + other_run + ":drain";
    o.reason_since = now_s;
    o.release_at = clock_.Now() + other_holds;
    Log(it->second, "drain " + o.reason);
    other_run_drains.erase(it);
  }
  CountOutLocked();
  if (n.drain_errs) return Diagnostic::Error("fake.timeout", "scontrol timed out");
  return OkStatus();
}

std::optional<Diagnostic> FakeCluster::SchedulerDownLocked() {
  if (clock_.Now() >= scheduler_down_until) return std::nullopt;
  ++calls_while_down;
  return Diagnostic::Error(std::string(modules::kSchedulerUnavailable),
                           "slurm unavailable: Unable to contact slurm controller");
}

std::vector<std::string> FakeCluster::stack_log() const {
  std::lock_guard lock(mu_);
  return stack_log_;
}

Status FakeCluster::SetStack(const modules::SchedulerNode& current, const modules::StackTag& tag) {
  std::lock_guard lock(mu_);
  if (auto down = SchedulerDownLocked()) return *down;
  auto& n = nodes_.at(current.name);
  if (n.refuse_tag)
    return Diagnostic::Error("slurm.update", "scontrol update " + current.name +
                                                 ": exit 1: slurm_update error: Invalid feature specification");
  n.tag = tag;
  stack_log_.push_back(current.name + ": stack " + modules::TagText(tag));
  return OkStatus();
}

std::vector<std::string> FakeCluster::claims() const {
  std::lock_guard lock(mu_);
  return claims_;
}

Status FakeCluster::SetClaim(const modules::SchedulerNode& current,
                             const modules::NodeClaim& claim) {
  std::lock_guard lock(mu_);
  if (auto down = SchedulerDownLocked()) return *down;
  auto& n = nodes_.at(current.name);
  n.comment = modules::WithClaim(current.comment, claim);
  claims_.push_back(current.name + (claim.run.empty() ? ": unclaim" : ": claim " + claim.run));
  if (claim.run.empty()) return OkStatus();
  if (auto it = other_run_claims.find(current.name); it != other_run_claims.end()) {
    auto& o = nodes_.at(it->second);
    o.comment = modules::WithClaim(o.comment, {other_run, claim.since});
    claims_.push_back(it->second + ": claim " + other_run);
    (other_claim_drains ? o.other_drain_at : o.other_unclaim_at) = clock_.Now() + other_drain_after;
    other_run_claims.erase(it);
  }
  return OkStatus();
}

Status FakeCluster::Resume(const std::string& node) {
  std::lock_guard lock(mu_);
  if (auto down = SchedulerDownLocked()) return *down;
  if (refuse_resume.count(node)) {
    Log(node, "resume refused");
    return Diagnostic::Error("slurm.command", "scontrol resume " + node +
                                                  ": exit 1: slurm_update error: Invalid node state specified");
  }
  auto& n = nodes_.at(node);
  n.drain = false;
  n.reason.clear();
  Log(node, "resume");
  stack_log_.push_back(node + ": resume showing " + modules::TagText(n.tag));
  if (auto it = drain_on_resume.find(node); it != drain_on_resume.end()) {
    auto& other = nodes_.at(it->second);
    other.drain = true;
    other.reason = "admin: " + it->second;
    Log(it->second, "drain " + other.reason);
    CountOutLocked();
  }
  return OkStatus();
}

plans::NodeFacts FakeCluster::Probe(const std::string& node) {
  std::lock_guard lock(mu_);
  plans::NodeFacts f;
  auto& n = nodes_.at(node);
  TickLocked(n);
  if (n.unreachable || n.rebooting) {
    f.readable = false;
    f.unreadable_reason = "refused";
    return f;
  }
  for (const auto& [m, v] : n.running)
    f.facts[m] = {{"value", v}, {"installed", n.installed.count(m) ? n.installed.at(m) : v}};
  if (f.facts.contains(n.malformed_module)) f.facts[n.malformed_module]["value"] = 5;
  if (!n.marker.empty()) f.facts["marker"] = nlohmann::json::parse(n.marker);
  f.facts_digest = plans::JsonDigest(f.facts);
  return f;
}

Result<std::unique_ptr<transport::Shell>> FakeCluster::Connect(const std::string& node) {
  std::lock_guard lock(mu_);
  auto& n = nodes_.at(node);
  TickLocked(n);
  if (n.unreachable || n.rebooting)
    return Diagnostic::Error("ssh.refused", node + ": connection refused");
  return std::unique_ptr<transport::Shell>(std::make_unique<FakeNodeShell>(*this, node));
}

void FakeCluster::RebootLocked(FakeNode& n) {
  n.rebooting = true;
  n.up_at = clock_.Now() + std::chrono::seconds(reboot_seconds);
  CountOutLocked();
}

Status FakeCluster::PowerCycle(const std::string& node) {
  std::lock_guard lock(mu_);
  auto& n = nodes_.at(node);
  Log(node, "bmc-reset");
  RebootLocked(n);
  return OkStatus();
}

Result<transport::CommandOutput> FakeCluster::RunOn(const std::string& node,
                                                    std::string_view command) {
  std::lock_guard lock(mu_);
  auto& n = nodes_.at(node);
  TickLocked(n);
  if (n.unreachable || n.rebooting)
    return Diagnostic::Error("ssh.io", node + ": connection lost");
  transport::CommandOutput out;
  const std::string cmd(command);
  if (cmd == "cat /proc/sys/kernel/random/boot_id") {
    if (n.boot_id_unreadable > 0) {
      --n.boot_id_unreadable;
      return Diagnostic::Error("ssh.io", node + ": connection lost");
    }
    out.out = fmt::format("boot-{}\n", n.boot);
    return out;
  }
  if (cmd == "reboot") {
    Log(node, "reboot");
    if (!n.ignore_reboot) RebootLocked(n);
    return out;
  }
  if (cmd.rfind("mkdir -p /var/lib/plumb", 0) == 0) {
    // The marker JSON is the single-quoted word after printf's format.
    auto fmt_end = cmd.find("' ", cmd.find("printf '")+8);
    auto a = cmd.find('\'', fmt_end + 1), b = cmd.find('\'', a + 1);
    n.marker = cmd.substr(a + 1, b - a - 1);
    Log(node, "marker");
    return out;
  }
  if (cmd.rfind("set ", 0) == 0) {
    std::istringstream ss(cmd.substr(4));
    std::string mod, value, reboot;
    ss >> mod >> value >> reboot;
    if (clock_.Now() < n.job_until || !n.drain)
      violations_.push_back(fmt::format("{}: {} while {}", node, cmd,
                                        clock_.Now() < n.job_until ? "a job runs" : "not drained"));
    if (!n.tag.empty())
      violations_.push_back(fmt::format("{}: {} while showing stack {}", node, cmd,
                                        modules::TagText(n.tag)));
    if (n.apply_fails) {
      Log(node, "set-failed " + mod);
      out.exit_status = 100;
      out.err = "E: Sub-process /usr/bin/dpkg returned an error code (1)\n";
      return out;
    }
    Log(node, "set " + mod + " " + value);
    n.installed[mod] = value;
    if (reboot.empty()) n.running[mod] = value;
    return out;
  }
  // Anything else is a health gate.
  Log(node, "health " + cmd);
  out.exit_status = n.health_exit;
  if (n.health_exit) out.err = "gate failed\n";
  return out;
}

std::vector<modules::Action> FakeModule::Diff(const nlohmann::json& desired,
                                              const modules::Facts& facts) const {
  const std::string want = desired.at(name_).get<std::string>();
  const std::string running = facts.value("value", "");
  const std::string installed = facts.value("installed", running);
  modules::Action a;
  a.module = name_;
  a.key = name_;
  a.pointer = "/" + name_;
  a.before = running;
  a.after = want;
  a.disruption = d_;
  if (installed != want) {
    a.id = name_ + ".install";
    a.summary = fmt::format("install {} {} (have {})", name_, want, installed);
    return {a};
  }
  if (running != want) {
    a.id = name_ + ".activate";
    a.summary = fmt::format("activate {} {} at boot", name_, want);
    return {a};
  }
  return {};
}

modules::ApplyOutcome FakeModule::Apply(modules::NodeContext& ctx,
                                        const modules::Action& action) const {
  using modules::ApplyOutcome;
  if (action.id == name_ + ".activate")
    return ApplyOutcome::NothingToDo("installed; the reboot activates it");
  if (!ctx.shell) return ApplyOutcome::Failed(Diagnostic::Error("apply.ssh", "no shell"));
  const std::string cmd = fmt::format("set {} {}{}", name_, action.after.get<std::string>(),
                                      d_ >= modules::Disruption::kReboot ? " reboot" : "");
  auto r = ctx.shell->Run(cmd, std::chrono::seconds(60));
  if (!r) return ApplyOutcome::Failed(r.error());
  if (r->exit_status != 0)   // worded like modules/apply_util's RunChecked
    return ApplyOutcome::Failed(Diagnostic::Error(
        "apply.failed", fmt::format("'{}' exited {}: {}", cmd, r->exit_status, r->err)));
  return ApplyOutcome::Done();
}

long long FakeLeases::NowUnix() const {
  return std::chrono::duration_cast<std::chrono::seconds>(clock_.Now().time_since_epoch()).count();
}

Result<plans::LeaseReply> FakeLeases::Acquire(const std::string& node, const plans::LeaseHolder& me,
                                              std::chrono::seconds ttl) {
  std::lock_guard lock(mu_);
  plans::LeaseReply r;
  log_.push_back(node + " acquire " + me.run);
  if (unreachable.count(node))
    return Diagnostic::Error("ssh.connect", node + " (root@127.0.0.1:22): connection refused");
  auto it = held_.find(node);
  if (it != held_.end() && it->second.run != me.run) {
    if (it->second.expires > NowUnix()) {
      r.kind = plans::LeaseReply::Kind::kHeld;
      r.other = it->second;
      return r;
    }
    r.kind = plans::LeaseReply::Kind::kTookOver;
    r.other = it->second;
  }
  plans::LeaseHolder h = me;
  h.expires = NowUnix() + ttl.count();
  held_[node] = h;
  return r;
}

Result<plans::LeaseReply> FakeLeases::Renew(const std::string& node, const plans::LeaseHolder& me,
                                            std::chrono::seconds ttl) {
  std::lock_guard lock(mu_);
  plans::LeaseReply r;
  auto it = held_.find(node);
  if (it == held_.end() || it->second.run != me.run || it->second.host != me.host ||
      it->second.pid != me.pid) {
    r.kind = plans::LeaseReply::Kind::kLost;
    if (it != held_.end()) r.other = it->second;
    return r;
  }
  it->second.expires = NowUnix() + ttl.count();
  return r;
}

Status FakeLeases::Release(const std::string& node, const plans::LeaseHolder& me) {
  std::lock_guard lock(mu_);
  log_.push_back(node + " release " + me.run);
  if (auto it = held_.find(node); it != held_.end() && it->second.run == me.run &&
                                  it->second.host == me.host && it->second.pid == me.pid)
    held_.erase(it);
  return OkStatus();
}

void FakeLeases::Hold(const std::string& node, const std::string& run, std::chrono::seconds ttl) {
  std::lock_guard lock(mu_);
  held_[node] = {run, "other-host", 4242, "bob", NowUnix() + ttl.count()};
}

std::string FakeLeases::HolderOf(const std::string& node) {
  std::lock_guard lock(mu_);
  auto it = held_.find(node);
  return it == held_.end() ? std::string() : it->second.run;
}

std::vector<std::string> FakeLeases::log() {
  std::lock_guard lock(mu_);
  return log_;
}

}  // namespace plumb::fakes
