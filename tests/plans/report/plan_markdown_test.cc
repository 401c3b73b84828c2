// The plan as a pull-request comment: every section of the text plan, in markdown, escaped,
// and never over GitHub's 65,536-character limit (cut with a count and a pointer).
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "plans/report/plan_markdown.h"
#include "plans/report/report_fixture.h"

using namespace plumb;
using plans::report::MarkdownOptions;
using plans::report::PlanToMarkdown;

namespace {

plans::Plan MarkdownFullPlan(testing::ReportWorld& w) {
  plans::Plan p = w.plan;
  inventory::RolloutPolicy roll;
  roll.name = "roll";
  p.rollouts["roll"] = roll;
  p.batches.push_back({0, "roll", true, {"gpu002"}, {"r01"}, 1, 600});
  p.batches.push_back({1, "roll", false, {"gpu001"}, {}, 1, 15});
  p.peak_unavailable = 1;
  p.est_seconds = 615;
  p.blocking_jobs.push_back({"gpu002", {"1234 (alice: train-llm)"}});
  p.digest = "sha256:" + std::string(64, 'e');
  return p;
}

bool MarkdownHas(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("plan markdown: summary first, disruption, batches, peak, estimate, jobs, changes") {
  testing::ReportWorld w;
  MarkdownOptions o;
  o.notes = {"Commit cccccccccccc: signed by ssh alice@example (SHA256:x)"};
  o.artefact = "the plan file `plan.json`";
  const std::string md = PlanToMarkdown(MarkdownFullPlan(w), o);
  CHECK(md.rfind("### plumb plan: cluster `pod-a` at `cccccccccccc` (ref `main`)\n\n"
                 "**Plan: 2 node(s) to change (1 reboot, 1 none), 1 in sync, 1 unreadable.**", 0) == 0);
  CHECK(MarkdownHas(md, "> Commit cccccccccccc: signed by ssh alice\\@example (SHA256:x)"));
  CHECK(MarkdownHas(md, "| drain + reboot | `gpu002` |"));
  CHECK(MarkdownHas(md, "| live (no drain) | `gpu001` |"));
  CHECK(MarkdownHas(md, "| 1 | canary | `gpu002` | ~10m | `roll` | `r01` |"));
  CHECK(MarkdownHas(md, "**Peak nodes out at once:** 1"));
  CHECK(MarkdownHas(md, "**Estimated duration:** 11m"));
  CHECK(MarkdownHas(md, "- `gpu002`: 1234 (alice: train-llm)"));
  CHECK(MarkdownHas(md, "<details><summary><code>gpu002</code> — reboot</summary>"));
  CHECK(MarkdownHas(md, "| ~ | `nvidia.driver` | `535.161.08` | `550.90.07` | reboot | intent | "
                "`stacks/h100.yaml:2:19` |"));
  CHECK(MarkdownHas(md, "PLAN INCOMPLETE"));
  CHECK(MarkdownHas(md, "- `gpu004`: timeout"));
  CHECK(MarkdownHas(md, "plan digest `sha256:eeee"));
  CHECK_FALSE(MarkdownHas(md, "Truncated"));
}

TEST_CASE("plan markdown: identical nodes collapse; waived keys listed; values escaped") {
  testing::ReportWorld w;
  plans::Plan p = w.plan;
  p.nodes.clear();
  p.unreadable.clear();
  for (int i = 1; i <= 16; ++i) {
    plans::NodePlan n = w.plan.nodes[1];
    n.node = fmt::format("gpu{:03}", i);
    p.nodes.push_back(n);
  }
  // A value read from a node may hold anything: it must not break the table or add markup.
  p.nodes[4].actions[0].action.before = "5|<img src=x>`";
  plans::NodeWaived nw;
  nw.node = "gpu001";
  plans::WaivedChange wc;
  wc.change = w.plan.nodes[1].actions[0];
  wc.reason = "vendor hotfix <b>pending</b>";
  wc.owner = "@infra";
  wc.expires = "2099-01-01";
  nw.changes.push_back(wc);
  p.waived.push_back(nw);
  const std::string md = PlanToMarkdown(p);
  CHECK(MarkdownHas(md, "<summary><code>gpu[001-004,006-016]</code> (15 nodes) — reboot</summary>"));
  CHECK(MarkdownHas(md, "`5\\|<img src=x>'`"));   // in a code span: shown, not rendered
  CHECK(MarkdownHas(md, "#### Waived (left as they are)"));
  CHECK(MarkdownHas(md, "vendor hotfix &lt;b&gt;pending&lt;/b&gt; | \\@infra |"));
}

TEST_CASE("plan markdown: a plan too big for a comment is cut with a count and a pointer") {
  testing::ReportWorld w;
  plans::Plan p = w.plan;
  p.nodes.clear();
  p.unreadable.clear();
  // 3,000 nodes, each with its own change: far more than 65,536 characters.
  for (int i = 0; i < 3000; ++i) {
    plans::NodePlan n = w.plan.nodes[1];
    n.node = fmt::format("gpu{:05}", i);
    n.actions[0].action.after = fmt::format("550.90.{}", i);
    p.nodes.push_back(n);
    p.batches.push_back({i, "roll", i == 0, {n.node}, {}, 1, 600});
  }
  MarkdownOptions o;
  o.artefact = "the plan file `plan.json`";
  const std::string md = PlanToMarkdown(p, o);
  CHECK(md.size() <= 65536);
  CHECK(md.size() > 60000);   // it uses the room it has
  CHECK(MarkdownHas(md, "**Plan: 3000 node(s) to change"));   // the summary always shows
  CHECK(MarkdownHas(md, "more batches not shown (the comment limit is 65536 characters): see the plan "
                "file `plan.json`"));
  CHECK(MarkdownHas(md, "**Truncated**"));
  CHECK(MarkdownHas(md, "the whole plan: the plan file `plan.json`"));
  // A smaller limit: still within it.
  o.max_chars = 5000;
  CHECK(PlanToMarkdown(p, o).size() <= 5000);
}

TEST_CASE("plan markdown: health findings, a skipped node, every member named, why, the facts' time (issue 33)") {
  testing::ReportWorld w;
  w.AddIssue33();
  plans::Plan p = MarkdownFullPlan(w);
  p.batches = {{0, "roll", true, {"gpu001"}, {}, 1, 600}};
  const std::string md = PlanToMarkdown(p);
  CHECK(md.rfind("### plumb plan: cluster `pod-a` at `cccccccccccc` (ref `main`)\n\n"
                 "**Plan: 1 node(s) to change (1 reboot), 1 in sync, 1 unreadable; health: 1 node(s) unhealthy, "
                 "2 finding(s), 1 node(s) skipped.**\n\n"
                 "Plan made 2026-11-29T12:00:00Z; facts gathered 2026-10-29T12:00:00.000Z, 31d 0h before.", 0) == 0);
  CHECK(MarkdownHas(md, "| ~ | `fabric.infiniband.rate_gbps [mlx5_0 port 1]` | `100.0` | `400` | drain | intent |"));
  CHECK(MarkdownHas(md, "| ~ | `fabric.infiniband.rate_gbps [mlx5_3 port 1]` | `100.0` | `400` | drain | intent |"));
  CHECK(MarkdownHas(md, "| ~ | `bios.SriovGlobalEnable` | `Disabled` | `Enabled` | reboot | intent |"));
  CHECK(MarkdownHas(md, "| + | `bios.WorkloadProfile` | `(absent)` | `HPC` | reboot | intent |"));
  CHECK(MarkdownHas(md, "| ~ | `nvidia.driver` | `550.90.07` | `550.90.07` | reboot | repair: nvidia-driver-550 "
                        "is not (fully) installed |"));
  CHECK(MarkdownHas(md, "<code>gpu002</code> — reboot — <b>skipped: unhealthy</b> (rollout roll: unhealthy: skip)"));
  CHECK(MarkdownHas(md, "#### Health (findings, not changes: nothing here is applied)"));
  CHECK(MarkdownHas(md, "| `gpu002` | fail | `gpu_health` | GPU uncorrected ECC errors | `GPU 3` | `2` | `max 0` | "
                        "2 uncorrected ECC errors since the driver loaded &gt; 0 |"));
  CHECK(MarkdownHas(md, "| `gpu003` | warn | `gpu_health` | GPU XID 13 | `GPU 0` | `1` | `not 48, 63` |"));
  CHECK(MarkdownHas(md, "Not applied: left as it is, unhealthy (rollout roll: unhealthy: skip): gpu002"));
  CHECK_FALSE(MarkdownHas(md, "| `health.gpu_health`"));   // a finding is never a change row
  CHECK_FALSE(MarkdownHas(md, "| drain + reboot | `gpu[001-002]`"));
  CHECK(MarkdownHas(md, "| drain + reboot | `gpu001` |"));
}

TEST_CASE("plan markdown: the stacks table, with the jobs a stack's last node leaves behind") {
  testing::ReportWorld w;
  plans::Plan p = MarkdownFullPlan(w);
  p.stacks.push_back({"gpu-2025q3", 2, 0, {{"12", "alice", "train", "PENDING", "gpu-2025q3"}}});
  p.stacks.push_back({"gpu-2025q4", 0, 2, {}});
  const std::string md = PlanToMarkdown(p, MarkdownOptions{});
  CHECK(MarkdownHas(md, "#### Stacks\n"));
  CHECK(MarkdownHas(md, "| `gpu-2025q3` | 2 | 0 | **12 (alice: train, PENDING)** |\n"));
  CHECK(MarkdownHas(md, "| `gpu-2025q4` | 0 | 2 |  |\n"));
  CHECK_FALSE(MarkdownHas(PlanToMarkdown(MarkdownFullPlan(w), MarkdownOptions{}), "#### Stacks"));
}
