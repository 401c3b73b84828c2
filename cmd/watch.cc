// plumb watch: keep every node under watch. Its command line is cli/watch_command.h; this sets
// up the process (signals, the file descriptor limit), wires the real transports (SSH sessions,
// the git repo, the HTTP endpoint, the events file) and runs plans::watch::Watcher. Read-only,
// like drift.
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdio>

#include "cli/watch_command.h"
#include "cmd/command.h"
#include "cmd/gather_support.h"
#include "cmd/read_run.h"
#include "cmd/repo_load.h"
#include "inventory/version.h"
#include "modules/registry.h"
#include "modules/transport/cancel_signal.h"
#include "modules/transport/metrics_server.h"
#include "cmd/ssh_factory.h"
#include "plans/watch/watch_flags.h"
#include "plans/watch/watch_world.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kWatchVerb = "watch";
namespace {

using WatchArgs = cli::WatchArgs;

// Set by the signal handlers, read by the watch loop (lock-free atomics: async-signal-safe).
// g_watch_stop is made before the handlers are installed; its Set() is async-signal-safe and wakes
// every SSH wait in progress (CancelSignal).
transport::CancelSignal* g_watch_stop = nullptr;
std::atomic<bool> g_reload{false};

void OnStop(int) { g_watch_stop->Set(); }
void OnReload(int) { g_reload.store(true); }

void InstallSignals() {
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = OnStop;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sa.sa_handler = OnReload;
  sigaction(SIGHUP, &sa, nullptr);
  // A reader of --events or stdout that goes away must be an error we report, not a silent
  // death; a node's socket closing under libssh must not kill the watch either.
  sa.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &sa, nullptr);
}

// One session per node is one file descriptor per node: 1024 nodes do not fit the usual soft
// limit of 1024. Raise it to the hard limit, and say so when even that is short.
void RaiseFdLimit(size_t nodes, int fanout) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  const std::string warning = plans::watch::FdLimitWarning(rl.rlim_cur, rl.rlim_cur == RLIM_INFINITY, nodes, fanout);
  if (!warning.empty()) std::fprintf(stderr, "plumb watch: warning: %s\n", warning.c_str());
}

plans::watch::WatchDeps WatchDepsOf(const GlobalOptions& g, const WatchArgs& a,
                                    plans::watch::WatchWorld& w) {
  plans::watch::WatchDeps deps = w.Deps();
  // Ctrl-C ends probes in flight at once.
  deps.shells = [repo_root = RepoRoot(g), accept = a.accept_new_host_keys](
                    const inventory::Cluster& c) -> std::unique_ptr<plans::ShellFactory> {
    return MakeNodeShells(c.ssh, repo_root, accept, g_watch_stop);
  };
  deps.modules = plans::watch::WatchedModules(modules::AllModules());
  if (!a.textfile.empty())
    deps.write_textfile = [path = a.textfile](const std::string& text) { return WriteOutput(path, text); };
  deps.log = [](const std::string& line) { std::fprintf(stderr, "plumb watch: %s\n", line.c_str()); };
  return deps;
}

// The watcher, started, and its metrics endpoint (--listen); then the watch until it stops.
int RunStartedWatch(const WatchArgs& a, plans::watch::Watcher& watcher) {
  if (Status st = watcher.Start(); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.error().ToString().c_str());
    return ExitCodeFor(kWatchVerb, Outcome::kError);
  }
  std::unique_ptr<transport::MetricsServer> server;
  if (!a.listen.empty()) {
    auto started = transport::MetricsServer::Start(a.listen, [&watcher] { return watcher.Metrics(); });
    if (!started.ok()) {
      std::fprintf(stderr, "%s\n", started.error().ToString().c_str());
      return ExitCodeFor(kWatchVerb, Outcome::kError);
    }
    server = std::move(started.value());
    std::fprintf(stderr, "plumb watch: metrics on http://%s/metrics\n", a.listen.c_str());
  }
  RaiseFdLimit(watcher.node_count(), a.flags.fanout);
  plans::watch::WatchControl control{&g_watch_stop->flag(), &g_reload};
  int rc = watcher.Run(control);
  server.reset();   // no scrape reaches a watcher being torn down
  return rc;
}

int RunWatch(const GlobalOptions& g, const WatchArgs& a) {
  if (g.working_tree) {
    std::fprintf(stderr, "error: watch reads the repo at --ref; --working-tree is not for it\n");
    return ExitCodeFor(kWatchVerb, Outcome::kError);
  }
  auto opt = plans::watch::WatchOptionsFrom(a.flags);
  if (!opt.ok()) {
    std::fprintf(stderr, "error: %s\n", opt.error().message.c_str());
    return ExitCodeFor(kWatchVerb, Outcome::kError);
  }
  auto events = plans::watch::EventsOutput::Open(a.events, stdout);
  if (!events.ok()) {
    std::fprintf(stderr, "error: %s\n", events.error().message.c_str());
    return ExitCodeFor(kWatchVerb, Outcome::kError);
  }
  static transport::CancelSignal stop;   // static: a late signal still finds it
  g_watch_stop = &stop;
  InstallSignals();
  // Up to --fanout threads allocate at once (gather does the same; see cmd/gather.cc).
  mallopt(M_ARENA_MAX, 2);
  plans::watch::WatchWorld world(RepoLoadOptions(g.repo, g.ref, false), a.flags.fanout, **events);
  plans::watch::Watcher watcher(WatchDepsOf(g, a, world), *opt);
  return RunStartedWatch(a, watcher);
}

}  // namespace

void RegisterWatch(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static WatchArgs a;
  CLI::App* sub = cli::AddWatchCommand(app, g, a);
  sub->callback([&run, &g] { run = [&g] { return RunWatch(g, a); }; });
}

}  // namespace plumb::cmd
