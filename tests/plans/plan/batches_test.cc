// MakeBatches scans only as far as a batch can still grow. These tests hold it to the plain
// definition it replaced (every batch scans every node left), on random fleets: same batches,
// same order, same nodes left unscheduled.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include <fmt/format.h>

#include "plans/plan/planner.h"

using namespace plumb;

namespace {

// The definition: each batch walks all the remaining nodes in (domain, name) order.
std::vector<plans::Batch> ReferenceBatches(const std::vector<const plans::NodePlan*>& nodes,
                                           const inventory::Cluster& cluster,
                                           const inventory::RolloutPolicy& policy, int scope_total,
                                           int already_out) {
  std::vector<plans::Batch> batches;
  const int capacity = policy.MaxUnavailable(scope_total) - already_out;
  auto domain_of = [&](const plans::NodePlan* n) {
    const inventory::Node* node = cluster.FindNode(n->node);
    return policy.domain_by.empty() || !node ? std::string() : node->Domain(policy.domain_by);
  };
  std::vector<const plans::NodePlan*> remaining = nodes;
  std::stable_sort(remaining.begin(), remaining.end(), [&](auto* a, auto* b) {
    return std::make_pair(domain_of(a), a->node) < std::make_pair(domain_of(b), b->node);
  });
  auto costs = [](const plans::NodePlan* n) { return n->NeedsDrain() && !n->already_unavailable; };
  bool first = true;
  while (!remaining.empty()) {
    plans::Batch b;
    b.rollout = policy.name;
    b.budget = std::max(capacity, 0);
    b.canary = first && policy.canary > 0;
    const int limit = b.canary ? std::min(policy.canary, std::max(capacity, 0)) : b.budget;
    int out = 0;
    std::map<std::string, int> per_domain;
    std::vector<const plans::NodePlan*> left;
    for (const plans::NodePlan* n : remaining) {
      bool take = true;
      const std::string d = domain_of(n);
      if (costs(n)) {
        if (out >= limit) take = false;
        else if (!policy.domain_by.empty()) {
          if (policy.domain_mode == inventory::DomainMode::kSpread) {
            if (per_domain[d] >= policy.domain_at_once) take = false;
          } else if (!per_domain.count(d) && static_cast<int>(per_domain.size()) >= policy.domain_at_once) {
            take = false;
          }
        }
      } else if (b.canary && static_cast<int>(b.nodes.size()) >= std::max(policy.canary, 1)) {
        take = false;
      }
      if (!take) {
        left.push_back(n);
        continue;
      }
      b.nodes.push_back(n->node);
      if (costs(n)) ++out, ++per_domain[d];
      b.est_seconds = std::max(b.est_seconds, n->disruption >= modules::Disruption::kReboot ? 600 : 15);
    }
    if (b.nodes.empty()) break;
    for (const auto& [d, count] : per_domain)
      if (!d.empty()) b.domains.push_back(d);
    batches.push_back(std::move(b));
    remaining = std::move(left);
    first = false;
  }
  return batches;
}

}  // namespace

TEST_CASE("batches: the bounded scan makes exactly the batches of the full scan, on random fleets") {
  std::mt19937 rng(20261203);
  for (int round = 0; round < 300; ++round) {
    const int n = 1 + static_cast<int>(rng() % 120);
    inventory::Cluster cluster;
    std::vector<plans::NodePlan> plans(n);
    const bool all_drain = rng() % 2;   // half the fleets: every node costs budget
    for (int i = 0; i < n; ++i) {
      inventory::Node node;
      node.name = fmt::format("n{:03}", rng() % 1000);   // duplicates sort stably
      node.rack = fmt::format("r{}", rng() % 7);
      cluster.nodes.push_back(node);
      plans[i].node = node.name;
      // Mostly reboots; some live changes (no budget), some already out (no budget either).
      const unsigned kind = all_drain ? 0 : rng() % 10;
      plans[i].disruption = kind < 7 ? modules::Disruption::kReboot : modules::Disruption::kNone;
      plans[i].already_unavailable = kind == 9;
    }
    std::vector<const plans::NodePlan*> ptrs;
    for (const auto& p : plans) ptrs.push_back(&p);
    inventory::RolloutPolicy policy;
    policy.name = "r";
    policy.max_unavailable_count = 1 + static_cast<int>(rng() % 9);
    policy.canary = static_cast<int>(rng() % 3);
    if (rng() % 2) {
      policy.domain_by = "rack";
      policy.domain_mode = rng() % 2 ? inventory::DomainMode::kSpread : inventory::DomainMode::kAligned;
      policy.domain_at_once = 1 + static_cast<int>(rng() % 3);
    }
    const int already_out = static_cast<int>(rng() % 3);
    Diagnostics diags;
    auto got = plans::MakeBatches(ptrs, cluster, policy, n, already_out, diags);
    auto want = ReferenceBatches(ptrs, cluster, policy, n, already_out);
    CAPTURE(round);
    REQUIRE(got.size() == want.size());
    for (size_t b = 0; b < got.size(); ++b) {
      CHECK(got[b].nodes == want[b].nodes);
      CHECK(got[b].domains == want[b].domains);
      CHECK(got[b].canary == want[b].canary);
      CHECK(got[b].budget == want[b].budget);
    }
  }
}
