#pragma once
/// The drift report: one read-only verdict per node x desired key, across every module that ran
/// (in-band and, when present, firmware/BIOS over Redfish). Built from a Plan (whose actions ARE
/// the drift) and the desired state; waivers from the cluster repo turn matching drift into
/// "waived" until they expire. Pure: the caller passes `today`.
///
/// Verdict precedence (README "drift exit codes"): error (1) > drift (2) > partial (3) >
/// in sync (0). Drift that is entirely waived is in sync; an expired waiver waives nothing.
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/model.h"
#include "modules/module.h"
#include "modules/registry.h"
#include "plans/plan/plan.h"
#include "schemas/exit_codes.h"
#include "plans/plan/planner.h"
#include "schemas/diagnostics.h"

namespace plumb::plans::report {

/// One desired key's state on one node. (A health check's verdict is modules::CheckStatus.)
enum class DriftStatus {
  kInSync,      ///< the module checked the key and found the desired value
  kDrift,       ///< the live value differs (an expired waiver leaves it here)
  kWaived,      ///< differs, but an unexpired waiver covers it
  kUnchecked,   ///< no module of this run owns the key (e.g. firmware without BMC facts)
};
const char* DriftStatusName(DriftStatus s);

/// The waiver that matched a check, as written in waivers.yaml.
struct WaiverRef {
  std::string nodes, keys, reason, owner, expires;
  Location where;
  bool expired = false;
};

/// What a check is about: the key, where it is pinned and what it should be. Every node that
/// shares a merged desired state shares these (a 10,000-node report has 4x10^5 checks).
struct CheckSubject {
  std::string key;        ///< "sysctl.vm.swappiness"
  std::string pointer;    ///< "/sysctl/vm.swappiness"
  std::string module;     ///< "sysctl"
  nlohmann::json desired; ///< the desired value
  Location origin;        ///< where the pin is written (file:line:col)
};

/// One node x one desired key.
struct DriftCheck {
  std::shared_ptr<const CheckSubject> subject;   ///< never null in a report
  DriftStatus status = DriftStatus::kInSync;
  nlohmann::json observed;///< the live value when it differs (null when in sync or absent)
  std::string summary;    ///< the module's own words for the change
  /// The member of the key this row is about ("mlx5_0 port 1", "eth2"; report/rows.h): each
  /// port, interface or GPU off its pin is a row of its own. "" for the key as a whole.
  std::string member;
  /// Why it differs when the values alone do not say ("550.90.07 -> 550.90.07": the pinned
  /// package is missing or from another archive); "" otherwise (report/rows.h WhyOf).
  std::string why;
  ChangeReason reason = ChangeReason::kIntent;   ///< repair vs new intent (drift only)
  modules::Disruption disruption = modules::Disruption::kNone;
  /// The waiver that matched, shared by every check it matches (a report has 10^5+ checks, and
  /// an inline WaiverRef would cost each of them ~200 bytes). Null when none matched.
  std::shared_ptr<const WaiverRef> waiver;

  const std::string& key() const { return subject->key; }
  const std::string& pointer() const { return subject->pointer; }
  const std::string& module() const { return subject->module; }
  const nlohmann::json& desired() const { return subject->desired; }
  const Location& origin() const { return subject->origin; }
  bool Differs() const { return status == DriftStatus::kDrift || status == DriftStatus::kWaived; }
};

struct DriftNode {
  std::string node;
  std::string rack;                  ///< failure-domain label for the heat map; "" if none
  bool readable = true;
  std::string unreadable_reason;
  std::string marker_commit;         ///< commit the node says it was last applied from
  std::vector<DriftCheck> checks;    ///< by key (a key with several members: a row each)
  /// Its failed and warned health checks (plans/plan/plan.h Finding): reported beside the drift,
  /// never counted as drift, never in the verdict.
  std::vector<Finding> findings;

  int Count(DriftStatus s) const;
  bool Drifted() const { return Count(DriftStatus::kDrift) > 0; }
  bool Unhealthy() const;   ///< some finding failed
};

enum class DriftVerdict { kInSync, kDrift, kPartial, kError };
const char* DriftVerdictName(DriftVerdict v);

struct DriftReport {
  inventory::Source source;
  std::string cluster;
  std::string created_at;            ///< RFC 3339 UTC
  /// When the facts judged were read (the plan's gathered_at): a snapshot's own time with
  /// --facts, so a month-old snapshot never reads as "now". "" when not known.
  std::string gathered_at;
  std::vector<DriftNode> nodes;      ///< by name
  Diagnostics diags;                 ///< expired waivers (warnings), planner findings
  DriftVerdict verdict = DriftVerdict::kInSync;

  int drifted_nodes = 0, drift_keys = 0, waived_keys = 0, unreadable_nodes = 0, checks = 0;
  /// Health findings: nodes with a failed check, and findings (failed or warned) in all.
  int unhealthy_nodes = 0, findings = 0;
};

struct DriftInput {
  const Plan* plan = nullptr;
  const inventory::Cluster* cluster = nullptr;
  const DesiredByNode* desired = nullptr;
  /// Modules that ran; a key no module here owns is kUnchecked. Empty: every key counts as
  /// checked.
  std::set<std::string> modules_run;
  std::string today;   ///< YYYY-MM-DD, for waiver expiry (a waiver is good through its day)
  /// The modules that may own a key (which one checks it, whether it is an on-demand check).
  const modules::Registry* registry = &modules::DefaultRegistry();
};

DriftReport MakeDriftReport(const DriftInput& in);

/// How a drift run ends (in sync, drift, no verdict, error), and its exit code from the one
/// table (schemas/exit_codes.h); `plumb watch --once` and `drift --format prom` report the same.
Outcome DriftOutcome(const DriftReport& report);
int DriftExitCode(const DriftReport& report);

/// The verdict of a report with these counts (precedence above; errors are the caller's).
DriftVerdict VerdictFor(int drift_keys, int unreadable_nodes);
/// Counts drifted nodes, drift and waived keys, unreadable nodes and checks again from
/// `r.nodes`, and sets the verdict: for a report whose nodes were changed one by one (the
/// watch keeps one and replaces each node's verdict as it is read again).
void Recount(DriftReport& r);

/// Does waiver `w` cover `node`? Its `nodes` is a glob ("gpu00[1-4]", "gpu*") or a Slurm host
/// list ("gpu[001-016],gpu020").
bool WaiverCoversNode(const inventory::Waiver& w, const std::string& node);

}  // namespace plumb::plans::report
