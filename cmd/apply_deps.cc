#include "cmd/apply_deps.h"

#include <cstdlib>

#include <chrono>
#include <cstdio>
#include <condition_variable>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "cmd/color.h"
#include "modules/drain/kubernetes_drainer.h"
#include "modules/drain/none_drainer.h"
#include "modules/drain/slurm_drainer.h"
#include "modules/transport/bmc.h"

namespace plumb::cmd {

plans::NodeFacts ToFacts(const plans::NodeObservation& o) {
  plans::NodeFacts f;
  f.readable = o.reachable;
  if (!o.reachable) {
    f.unreadable_reason = o.error.code.empty() ? o.error.message : o.error.code + ": " + o.error.message;
    return f;
  }
  for (const auto& [name, r] : o.facts) {
    // Read in part (part errors) counts as an error here too: apply never acts on half a view.
    if (std::string problem = modules::ModuleProblemText(r); !problem.empty())
      f.module_errors[name] = std::move(problem);
    if (r.ok()) f.facts[name] = r.value();
  }
  f.facts_digest = o.facts_digest;
  return f;
}

plans::NodeFacts GatherProber::Probe(const std::string& node) {
  const inventory::Node* n = cluster_.FindNode(node);
  if (!n) {
    plans::NodeFacts f;
    f.readable = false;
    f.unreadable_reason = "not in the inventory";
    return f;
  }
  auto shell = shells_.Open(*n);
  plans::NodeObservation o = plans::ProbeNode(node, *shell, modules_, timeout_);
  if (!o.reachable || n->bmc.empty() || !open_bmc_ || !desired_) return ToFacts(o);
  auto want = desired_->find(node);
  if (want == desired_->end()) return ToFacts(o);
  std::vector<const modules::Module*> bmc_modules;
  for (const modules::Module* m : modules_)
    if (m->HasBmcProbe() && m->Wants(want->second)) bmc_modules.push_back(m);
  if (bmc_modules.empty()) return ToFacts(o);
  plans::ObservedState one;
  one.nodes.emplace(node, std::move(o));
  plans::MergeBmcObservations(
      plans::GatherBmc(plans::BmcTargetsOf({n}), bmc_modules, 1, open_bmc_), bmc_modules, one);
  return ToFacts(one.nodes.at(node));
}

Result<std::unique_ptr<transport::Shell>> RealNodeTransport::Connect(const std::string& node) {
  const inventory::Node* n = cluster_.FindNode(node);
  if (!n) return Diagnostic::Error("apply.node", node + " is not in the inventory");
  return shells_.Open(*n);
}

transport::Bmc* RealNodeTransport::Bmc(const std::string& node) {
  const inventory::Node* n = cluster_.FindNode(node);
  if (!n || n->bmc.empty() || !bmcs_) return nullptr;
  std::lock_guard lock(mu_);
  auto& slot = open_[node];
  if (!slot) slot = bmcs_->Open({node, n->bmc, n->bmc_system});
  return slot.get();
}

Status RealNodeTransport::PowerCycle(const std::string& node) {
  transport::Bmc* b = Bmc(node);
  if (!b)
    return Diagnostic::Error("apply.no-bmc",
                             node + " has no usable BMC (no bmc: URL or no credentials)");
  auto sys = b->SystemLink();
  if (!sys) return sys.error();
  auto r = b->Reset(*sys, transport::ResetKind::kHardReboot);
  if (!r) return r.error();
  return OkStatus();
}

std::unique_ptr<modules::Drainer> MakeDrainer(inventory::DrainScheduler s, transport::Shell& local) {
  switch (s) {
    case inventory::DrainScheduler::kSlurm: return std::make_unique<modules::SlurmDrainer>(local);
    case inventory::DrainScheduler::kKubernetes:
      return std::make_unique<modules::KubernetesDrainer>(local);
    case inventory::DrainScheduler::kNone: return std::make_unique<modules::NoneDrainer>();
  }
  return std::make_unique<modules::NoneDrainer>();
}

namespace {

std::string Hms(long long ms) {
  long long s = ms / 1000;
  if (s < 60) return fmt::format("{}.{}s", s, (ms % 1000) / 100);
  return fmt::format("{}m{:02}s", s / 60, s % 60);
}

// Plain lines, one per thing that happened: what CI logs want.
class LineObserver final : public plans::Observer {
 public:
  explicit LineObserver(bool color) : color_(color) {}
  void OnEvent(const plans::RolloutEvent& e) override {
    using K = plans::RolloutEvent::Kind;
    std::string line;
    switch (e.kind) {
      case K::kRunStart: line = fmt::format("run {}: {}", e.run, e.message); break;
      case K::kBatchStart:
        line = fmt::format("batch {}/{}{}: {}", e.batch + 1, e.batches, e.canary ? " (canary)" : "",
                           e.message);
        break;
      case K::kStep:
        if (e.status == "start") return;   // the outcome line says it all
        line = fmt::format("  {:<10} {:<28} {}{}{}", e.node, e.step, e.status,
                           e.elapsed_ms > 0 ? " in " + Hms(e.elapsed_ms) : "",
                           e.message.empty() ? "" : ": " + e.message);
        break;
      case K::kNodeEnd:
        line = fmt::format("  {:<10} => {}{}", e.node, e.status,
                           e.message.empty() ? "" : " (" + e.step + ": " + e.message + ")");
        break;
      case K::kBatchEnd: return;
      case K::kRunEnd: line = fmt::format("run {} {}: {}", e.run, e.status, e.message); break;
      case K::kNote:
        if (e.message == "starting" || e.message == "continuing") return;
        line = fmt::format("  {} {}", e.node, e.message);
        break;
      case K::kWait:
        // The heartbeat (every 30 s): a CI log shows what the run waits for, and since when.
        line = fmt::format("  {:<10} {:<28} waiting {}: {}", e.node.empty() ? "-" : e.node,
                           e.step, Hms(e.elapsed_ms), e.message);
        break;
    }
    line = ColorizeReport(line, color_);
    std::lock_guard lock(mu_);
    std::fprintf(stdout, "%s\n", line.c_str());
    std::fflush(stdout);
  }

 private:
  const bool color_;
  std::mutex mu_;
};

class JsonObserver final : public plans::Observer {
 public:
  void OnEvent(const plans::RolloutEvent& e) override {
    std::string s = e.ToJson().dump();
    std::lock_guard lock(mu_);
    std::fprintf(stdout, "%s\n", s.c_str());
    std::fflush(stdout);
  }

 private:
  std::mutex mu_;
};

// A live table on a terminal: one row per node of the current batch, redrawn in place, and
// once a second by a ticker so a long wait shows its elapsed time move.
class TtyObserver final : public plans::Observer {
 public:
  explicit TtyObserver(bool color) : color_(color) {
    ticker_ = std::thread([this] {
      std::unique_lock lock(mu_);
      while (!cv_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; }))
        if (drawn_ > 0) Draw(std::chrono::steady_clock::now());
    });
  }
  ~TtyObserver() override {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    ticker_.join();
  }
  void OnEvent(const plans::RolloutEvent& e) override {
    using K = plans::RolloutEvent::Kind;
    std::lock_guard lock(mu_);
    auto now = std::chrono::steady_clock::now();
    switch (e.kind) {
      case K::kRunStart: header_ = fmt::format("run {}: {}", e.run, e.message); break;
      case K::kBatchStart:
        Finish();
        rows_.clear();
        order_.clear();
        batch_ = fmt::format("batch {}/{}{}", e.batch + 1, e.batches, e.canary ? " (canary)" : "");
        started_ = now;
        wait_.clear();
        break;
      case K::kStep: {
        Row& r = RowOf(e.node);
        r.step = e.step;
        r.status = e.status == "start" ? "…" : e.status;
        if (e.status == "start") r.step_since = now;
        if (!e.message.empty()) r.note = e.message;
        wait_.clear();   // something moved: the scheduler answers again
        break;
      }
      case K::kWait: {
        if (e.node.empty()) {
          wait_ = e.message;   // the run waits (the scheduler)
          break;
        }
        Row& r = RowOf(e.node);
        r.note = e.message;
        break;
      }
      case K::kNodeEnd: {
        Row& r = RowOf(e.node);
        r.status = e.status;
        r.done = true;
        r.note = e.message;
        break;
      }
      case K::kRunEnd:
        Draw(now);
        std::fprintf(stdout, "\nrun %s %s: %s\n", e.run.c_str(),
                     ColorizeStatus(e.status, color_).c_str(), e.message.c_str());
        std::fflush(stdout);
        return;
      default: break;
    }
    Draw(now);
  }

 private:
  struct Row {
    std::string step, status, note;
    bool done = false;
    std::chrono::steady_clock::time_point step_since = std::chrono::steady_clock::now();
  };
  Row& RowOf(const std::string& node) {
    if (!rows_.count(node)) order_.push_back(node);
    return rows_[node];
  }
  void Finish() { drawn_ = 0; std::fprintf(stdout, "\n"); }
  void Draw(std::chrono::steady_clock::time_point now) {
    std::string out;
    if (drawn_ > 0) out += fmt::format("\033[{}A\033[J", drawn_);
    int lines = 0;
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - started_).count();
    out += fmt::format("{}\n{}  elapsed {}s\n", header_, batch_, secs);
    lines += 2;
    if (!wait_.empty()) {
      out += "  " + wait_.substr(0, 110) + "\n";
      ++lines;
    }
    for (const auto& n : order_) {
      const Row& r = rows_[n];
      std::string status = r.status;
      if (!r.done && r.status == "…")   // a running step shows how long it has run
        status = Hms(std::chrono::duration_cast<std::chrono::milliseconds>(now - r.step_since).count());
      // Padded before colouring: escape codes have no width on the screen.
      const std::string cell = fmt::format("{:<12}", status);
      out += fmt::format("  {:<12} {:<28} {} {}\n", n, r.step,
                         ColorizeStatus(status, color_) + cell.substr(std::min(cell.size(), status.size())),
                         r.note.substr(0, 80));
      ++lines;
    }
    drawn_ = lines;
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
  }
  const bool color_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread ticker_;
  std::string header_, batch_, wait_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::map<std::string, Row> rows_;
  std::vector<std::string> order_;
  int drawn_ = 0;
};

}  // namespace

std::unique_ptr<plans::Observer> MakeObserver(const std::string& format, bool tty, bool color) {
  if (format == "json") return std::make_unique<JsonObserver>();
  if (tty) return std::make_unique<TtyObserver>(color);
  return std::make_unique<LineObserver>(color);
}

std::map<std::string, std::string> SchedulerEnv() {
  std::map<std::string, std::string> env;
  if (const char* sc = std::getenv("SLURM_CONF")) env["SLURM_CONF"] = sc;
  return env;
}

// The real drainers of `cluster`'s rollout policies; Slurm and kubectl run on this host
// through `local` (SLURM_CONF from the environment).
plans::Schedulers RealSchedulers(const inventory::Cluster& cluster, transport::Shell& local) {
  return plans::SchedulersFor(cluster, [&](inventory::DrainScheduler kind) {
    return MakeDrainer(kind, local);
  });
}

}  // namespace plumb::cmd
