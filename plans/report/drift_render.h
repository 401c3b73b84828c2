#pragma once
/// Renderers of a DriftReport, one per --format. Each is a pure function of the report, so each
/// is unit-tested (and the machine formats are validated against their published schemas:
/// JUnit XML against junit-10.xsd, SARIF against the SARIF 2.1.0 JSON Schema).
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "plans/report/drift.h"

namespace plumb::plans::report {

struct RenderOptions {
  std::string tool_version = "0.0.0";   ///< SARIF tool.driver.version
  long long now_unix = 0;               ///< prometheus plumb_last_run_timestamp_seconds
};

/// Human text: drifted keys per node (identical nodes collapsed into one host list), waived
/// and unchecked counts, unreadable nodes, the verdict.
std::string DriftToText(const DriftReport& r);
/// Everything in the report, for machines (documented in README "drift formats").
nlohmann::json DriftToJson(const DriftReport& r);
/// Writes DriftToJson(r) and a newline to `out`, one node at a time (never held whole): laid
/// out as dump(2) but for the nodes, each on one line of its own as dump() writes it.
void DriftToJson(const DriftReport& r, std::ostream& out);
/// JUnit XML: a testsuite per node, a testcase per node x key; drift is a <failure>, a waived
/// drift is <skipped>, an unchecked key is <skipped>, an unreadable node is one <error> case.
std::string DriftToJunit(const DriftReport& r);
/// The same, written to `out` node by node (never held whole).
void DriftToJunit(const DriftReport& r, std::ostream& out);
/// SARIF 2.1.0: one result per drifted or waived key, located at the pin's file:line in the
/// cluster repo; waived results carry an accepted external suppression with the justification.
nlohmann::json DriftToSarif(const DriftReport& r, const RenderOptions& o);
/// Writes DriftToSarif(r, o).dump(2) and a newline to `out`, results formatted on all cores.
void DriftToSarif(const DriftReport& r, const RenderOptions& o, std::ostream& out);
/// Prometheus text exposition for node_exporter's textfile collector.
std::string DriftToProm(const DriftReport& r, const RenderOptions& o);
/// `v` escaped as a Prometheus label value (backslash, double quote, newline).
std::string PromLabelValue(std::string_view v);
/// One self-contained HTML page (no script, no external resource): a rack x node heat map and a
/// per-node table.
std::string DriftToHtml(const DriftReport& r);

/// Escapes for XML text and attribute values (&, <, >, ", ') and drops characters XML 1.0
/// cannot carry.
std::string XmlEscape(std::string_view s);
/// Escapes for HTML text and attributes.
inline std::string HtmlEscape(std::string_view s) { return XmlEscape(s); }
/// A JSON value as a short string for humans: strings bare, others as JSON, null as "(absent)".
std::string ShowValue(const nlohmann::json& v);

}  // namespace plumb::plans::report
