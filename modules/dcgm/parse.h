#pragma once
/// Pure parsers for the DCGM probe: `dcgmi diag -r <level> -j` (per test, per GPU: pass, fail,
/// warn or skip, with DCGM's warning and info text) and `dcgmi discovery -l` (the GPUs DCGM sees).
///
/// Two JSON layouts exist (tests/data/dcgm, SOURCES.md):
///   DCGM 3.x  {"DCGM GPU Diagnostic": {"test_categories": [{"category", "tests": [{"name",
///             "results": [{"gpu_id": "3", "status": "Fail", "warnings": [{"warning",
///             "error_id", ...}], "info": "..."}]}]}]}, "version", "Driver Version Detected", ...}
///   DCGM 4.x  {"DCGM Diagnostic": {"test_categories": [... "results": [{"entity_group": "GPU",
///             "entity_id": 3, "status", "warnings", "info": [...]}], "test_summary":
///             {"status", "info"}]}, "entity_groups": [...], "metadata": {"version",
///             "Driver Version Detected"}}
/// Both are read; so are the older forms of `warnings` (plain strings) and of `info` (one
/// string), and the failure document dcgmi prints when the diagnostic cannot run
/// ({"DCGM GPU Diagnostic": {"runtime_error": "...", "version": ...}}).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::dcgm {

/// Probe part names: `dcgmi diag -r <level> -j` and `dcgmi discovery -l`.
inline constexpr std::string_view kDiagPart = "diag";
inline constexpr std::string_view kDiscoveryPart = "discovery";

/// One warning DCGM attached to a result.
struct Warning {
  std::string message;
  std::optional<int> error_id;   ///< DCGM_FR_* from dcgm_errors.h; absent in plain-string warnings
};

/// One test's result for one entity.
struct TestResult {
  /// The GPU this result is for; nullopt when it is for the node as a whole (3.x Deployment
  /// tests without an error) or for another kind of entity (`entity_group`).
  std::optional<int> gpu;
  std::string entity_group;      ///< "GPU", "CPU" (4.x CPU EUD), or "" when DCGM named none
  std::optional<int> entity_id;  ///< the entity's id whatever its group
  std::string status;            ///< "pass", "fail", "warn", "skip" or "not-run"
  std::vector<Warning> warnings;
  std::vector<std::string> info;
};

/// One test of the run, e.g. "GPU Memory" (3.x display names) or "memory" (4.x plugin names).
struct Test {
  std::string category;          ///< "Deployment", "Integration", "Hardware", "Stress", ...
  std::string name;
  /// 4.x's test_summary status when there is one; otherwise the worst result's (fail > warn >
  /// pass > skip > not-run); "skip" for a test without results.
  std::string status;
  std::vector<TestResult> results;
  std::vector<std::string> info; ///< 4.x test_summary info
};

/// What `dcgmi diag -j` said.
struct Diag {
  std::string layout;            ///< "dcgm3" ("DCGM GPU Diagnostic") or "dcgm4" ("DCGM Diagnostic")
  std::string version;           ///< DCGM's version ("3.3.5"), "" when the document has none
  std::string driver_version;    ///< "Driver Version Detected", "" when absent
  /// Set when dcgmi could not run the diagnostic (its message, verbatim); `tests` is then empty.
  std::string runtime_error;
  std::vector<Test> tests;       ///< in document order
  /// Lines outside the JSON document (another tool's stderr merged into the part), verbatim,
  /// at most kMaxNotes.
  std::vector<std::string> notes;
};
inline constexpr size_t kMaxNotes = 8;

/// The JSON document is the first line that starts with '{' (after optional whitespace);
/// lines before and after it are notes. Fails (located, "probe.dcgm") on a document that is not
/// JSON or not one of the layouts above, on a status it does not know, and on dcgmi's "cannot
/// reach the host engine" text (HostEngineError), whose Diagnostic has a hint.
Result<Diag> ParseDiagJson(std::string_view text);

/// One row of `dcgmi discovery -l`'s GPU table.
struct DiscoveredGpu {
  int id = 0;
  std::string name;       ///< "NVIDIA H100 80GB HBM3"
  std::string bus_id;     ///< "00000000:18:00.0", as nvidia-smi prints it
  std::string uuid;       ///< "GPU-34bf77d1-..."
};
/// Reads the "N GPUs found." table (DCGM 4.5+: "N GPUs found (Active).", with a "Note:" line
/// when GPUs are left out; the NvSwitch, ConnectX and CPU tables after it are not read) and
/// checks that the table lists N GPUs. Fails like ParseDiagJson on the host engine text.
Result<std::vector<DiscoveredGpu>> ParseDiscovery(std::string_view text);

/// dcgmi's text when it cannot reach nv-hostengine ("Error: unable to establish a connection to
/// the specified host: localhost" / "Error: Unable to connect to host engine. Host engine
/// connection invalid/disconnected."), joined with "; ", or nullopt.
std::optional<std::string> HostEngineError(std::string_view text);

/// Parts diag, discovery -> {"present": bool, "host_engine": "ok" | "unreachable" | null,
///   "layout": "dcgm3" | "dcgm4" | null, "dcgm_version": str | null,
///   "driver_version": str | null, "runtime_error": str | null,
///   "tests": [{"category", "name", "status", "results": [{"gpu": int | null,
///              "entity_group"?: str, "status", "warnings": [{"message", "error_id": int | null}],
///              "info": [str]}]}],
///   "counts": {"pass", "fail", "warn", "skip", "not-run"},   (results, not tests)
///   "failures": [{"category", "test", "gpu": int | null, "status": "fail" | "warn",
///                 "message": first warning or ""}],
///   "gpus": [{"id", "name", "bus_id", "uuid"}] | null, "notes"?: [str], "part_errors"?}
/// "present" is false when dcgmi is not installed. Each part is read on its own
/// (modules/part_facts.h); exit 124 or a signal is a killed run, reported as a part error.
nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts);

}  // namespace plumb::modules::dcgm
