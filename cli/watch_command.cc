#include "cli/watch_command.h"

#include "cli/shared_options.h"

namespace plumb::cli {

CLI::App* AddWatchCommand(CLI::App& app, GlobalOptions& g, WatchArgs& a) {
  auto* sub = app.add_subcommand(
      "watch",
      "Keep every node under watch: one SSH session per node, kept open; the probe re-run every\n"
      "--interval; drift against --ref as JSON-line events and Prometheus metrics. Read-only.");
  AddSourceOptions(*sub, g);
  sub->add_option("--interval", a.flags.interval, "Each node is read once per interval (60s, 5m)")
      ->capture_default_str();
  sub->add_option("--spread", a.flags.spread,
                  "Fraction of the interval node reads are spread over (0: all at once)")
      ->capture_default_str();
  sub->add_option("--fanout", a.flags.fanout,
                  "Reads (and SSH handshakes) at once: worker threads, each ~0.5 MB kept")
      ->capture_default_str();
  AddNodeLimit(*sub, a.flags.limit);
  sub->add_option("--events", a.events, "Append events (JSON lines) to FILE instead of stdout");
  sub->add_option("--listen", a.listen,
                  "Serve Prometheus metrics at http://ADDRESS:PORT/metrics (127.0.0.1:9472)");
  sub->add_option("--textfile", a.textfile,
                  "Write the metrics to FILE after every round (node_exporter textfile collector)");
  sub->add_flag("--once", a.flags.once, "Read every node once (all at once, at most --fanout), then exit");
  sub->add_option("--rounds", a.flags.rounds, "Exit after this many rounds (0: run until stopped)")
      ->capture_default_str();
  sub->add_option("--ref-poll", a.flags.ref_poll, "How often --ref is resolved again")
      ->capture_default_str();
  AddHostKeysFlag(*sub, a.accept_new_host_keys);
  sub->footer(
      "Events (one JSON object a line): drift, drift_cleared, node_unreadable, node_readable,\n"
      "node_rebooted, desired_changed, desired_error; each with time, node, key, live, desired,\n"
      "commit as they apply. SIGHUP reads --ref again at once; SIGINT/SIGTERM close every\n"
      "session and exit 0.\n\n"
      "Examples:\n"
      "  plumb watch --repo pod-a --ref origin/main --listen 127.0.0.1:9472 --events drift.jsonl\n"
      "  plumb watch --repo pod-a --once --events -      # one round, current drift as events");
  return sub;
}

}  // namespace plumb::cli
