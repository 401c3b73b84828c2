// The watch's metrics: one series per node and key, whatever rows the key has.
#include <doctest/doctest.h>

#include "plans/report/prom_grammar.h"
#include "plans/watch/watch_metrics.h"

using namespace plumb;

TEST_CASE("watch metrics: a key with several members off its pin is one series, 1 when any drifts") {
  auto subject = std::make_shared<plans::report::CheckSubject>();
  subject->key = "fabric.infiniband.rate_gbps";
  subject->pointer = "/fabric/infiniband/rate_gbps";
  subject->module = "infiniband";
  subject->desired = 400;
  plans::report::DriftNode n;
  n.node = "n1";
  for (const char* port : {"mlx5_0 port 1", "mlx5_3 port 1"}) {
    plans::report::DriftCheck c;
    c.subject = subject;
    c.status = plans::report::DriftStatus::kDrift;
    c.observed = 100;
    c.member = port;
    n.checks.push_back(c);
  }
  plans::report::DriftReport r;
  r.cluster = "t";
  r.nodes = {n};
  plans::report::Recount(r);
  plans::watch::WatchStats s;
  const std::string text = plans::watch::RenderMetrics(r, s);
  CHECK(text.find("plumb_watch_key_drift{cluster=\"t\",node=\"n1\",key=\"fabric.infiniband.rate_gbps\"} 1\n") !=
        std::string::npos);
  testing::PromCheck check = testing::CheckPromText(text);
  INFO((check.problems.empty() ? std::string() : check.problems.front()));
  CHECK(check.problems.empty());   // no duplicate series
}
