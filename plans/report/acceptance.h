#pragma once
/// The acceptance report (`plumb acceptance`): the evidence a GPU cluster is handed over on -
/// every node's pins verified against their live values, its firmware versions, each health
/// check at its burn-in level with the value measured against the threshold - and a verdict per
/// node and for the whole. A value built from the drift report, the observed facts and the
/// health results; JSON (schemas/acceptance.schema.json) carries a digest that `plumb
/// acceptance verify` re-computes; HTML is one self-contained page.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "modules/registry.h"
#include "plans/observe/observed.h"
#include "plans/report/drift.h"
#include "plans/rollout/health_run.h"
#include "schemas/result.h"

namespace plumb::plans::report {

struct AcceptanceMeta {
  std::string cluster;
  std::string repo_ref;       ///< what was asked ("main", "v1.2")
  std::string commit;         ///< its full SHA
  std::string operator_name;  ///< who ran it ($SUDO_USER / $USER, or --operator)
  std::string started_at;     ///< RFC 3339 UTC
  std::string finished_at;
  std::string tool_version;
  int dcgm_level = 0;         ///< the DCGM level run (0: as each stack pins)
};

/// What acceptance found on one node.
struct AcceptanceNode {
  std::string node;
  bool passed = false;
  bool readable = true;          ///< its pins could be read (gather)
  bool health_checked = false;   ///< its health checks ran (a result, kept or new)
  /// Why it did not pass, one line each ("drift: nvidia.driver: 535.161.08, want 550.90.07",
  /// "dcgm: GPU Memory (GPU 3): ..."); empty when it passed.
  std::vector<std::string> reasons;
  /// Every pinned key: {"key", "desired", "live", "status": in_sync | drift | waived | unchecked}.
  nlohmann::json pins;
  /// The BMC's firmware inventory: [{"name", "version"}]; null when the BMC was not read.
  nlohmann::json firmware;
  NodeHealth health;
};

struct AcceptanceReport {
  AcceptanceMeta meta;
  std::vector<AcceptanceNode> nodes;   ///< in the drift report's order
  int Passed() const;
  int Failed() const;
};

/// Joins a node's drift checks, its observed facts (firmware) and its health. A node passes
/// when it was read, every pin was verified and none drifted (waived drift is accepted, and
/// listed), every health check ran and none failed. A node without a health result (not
/// checked) fails; so does a pin no module read (firmware and BIOS without the BMC).
AcceptanceReport MakeAcceptanceReport(const AcceptanceMeta& meta, const DriftReport& drift,
                                      const ObservedState& observed,
                                      const std::vector<NodeHealth>& health,
                                      const modules::Registry& registry = modules::DefaultRegistry());

/// The report as JSON, with "digest": "sha256:<hex>" over the canonical form of everything
/// else in the document.
nlohmann::json AcceptanceToJson(const AcceptanceReport& r);
/// Re-computes a report's digest: ok when it matches; an error ("acceptance.digest") naming
/// both when it does not, or ("acceptance.format") when the document has none.
Status VerifyAcceptanceDigest(const nlohmann::json& report);
/// One self-contained page (no script, no external resource): the summary, a per-node pass/fail
/// grid over the health modules and the pins, each node's NCCL bus bandwidth as a bar chart
/// (inline SVG) against the threshold, and per node the failed checks and drifted pins.
/// Rendered from the JSON; `verify` checks the JSON (the page is its rendering, not covered by
/// the digest: render it again from a verified JSON when in doubt).
/// `registry` says which module's checks are charted (ModuleInfo::acceptance_chart).
std::string AcceptanceToHtml(const nlohmann::json& report,
                             const modules::Registry& registry = modules::DefaultRegistry());

}  // namespace plumb::plans::report
