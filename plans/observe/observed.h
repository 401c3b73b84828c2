#pragma once
/// ObservedState: what gather saw on each node, as data. It is the planner's input, the facts
/// snapshot a plan records (for the stale check at apply time), and the file `plumb gather
/// --facts-out` writes so that plan/drift can be benchmarked and replayed "from recorded facts".
#include <atomic>
#include <functional>
#include <map>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "modules/module.h"
#include "modules/registry.h"
#include "plans/plan/planner.h"
#include "schemas/result.h"

namespace plumb::plans {

/// The snapshot's "format" value.
inline constexpr const char* kSnapshotFormat = "plumb.observed/v1";
/// A problem with a snapshot: code "facts.snapshot", with a hint on how to make a good one.
Diagnostic SnapshotError(std::string message);

/// Checks a snapshot's top level: an object with the right "format" and an object "nodes".
/// `source` names it in the message ("'facts.json'").
Status CheckSnapshotTop(const nlohmann::json& top, const std::string& source);

/// One node's observation.
struct NodeObservation {
  std::string node;
  /// True when the probe ran (the node answered over SSH). A reachable node can still have
  /// per-module errors in `facts`.
  bool reachable = false;
  /// Why the node could not be read, when !reachable ("ssh.refused", "ssh.timeout", "ssh.auth",
  /// "ssh.hostkey", "ssh.hostkey-changed", "ssh.io", "probe.output").
  Diagnostic error;
  /// Facts by module name, or the module's probe/parse error ("probe.<module>"). Facts may
  /// list parts that could not be read (modules::kPartErrorsKey): see ModuleErrorCount.
  std::map<std::string, Result<modules::Facts>> facts;
  /// SHA-256 (hex) of the raw probe output with the per-run nonce removed: evidence of exactly
  /// what the node printed.
  std::string raw_digest;
  /// "sha256:<hex>" of the canonical JSON of `facts` (errors included): equal digests mean
  /// equal observed state. The planner records it; apply refuses a node whose digest moved.
  std::string facts_digest;
  double elapsed_s = 0;   ///< connect + probe round trip, seconds
  /// Modules not read whole on this node: in error, or with part errors (modules::ModuleProblems).
  size_t ModuleErrorCount() const;
  /// Bytes of snapshot text this was read from (0 when not read from a snapshot, or not
  /// known): what a reader reading ahead uses to bound its memory. Not written back.
  size_t source_bytes = 0;
};

struct ObservedState {
  std::map<std::string, NodeObservation> nodes;
  std::string gathered_at;   ///< UTC, RFC 3339 ("2026-11-29T23:59:01Z")
  /// The cluster repo commit whose inventory named the nodes read ("" when not known: a
  /// snapshot of an older plumb, or a merge of different commits), and whether uncommitted
  /// edits were read with it. `plumb facts merge` refuses parts of different commits.
  std::string commit;
  bool working_tree = false;
  /// "i/n" when this is one shard of a sharded gather (plans/plan/shard.h); "" for all nodes.
  std::string shard;
  /// The nodes the gather was asked to read, before any shard was taken: its --limit ("" for
  /// every node of the inventory), how many that selected, and "sha256:<hex>" of their names
  /// (plans/plan/shard.h SelectionDigest). Shards of different selections are not parts of one
  /// whole: `plumb facts merge` refuses them. selection_digest "": not recorded (an older
  /// plumb, a merge of different selections).
  std::string selection;
  size_t selection_nodes = 0;
  std::string selection_digest;

  size_t UnreachableCount() const;
  /// Nodes reachable but with at least one module not read whole (NodeObservation::ModuleErrorCount).
  size_t ProbeErrorCount() const;
};

/// sha256:<hex> over the canonical JSON (sorted keys, no whitespace) of `facts`, each entry
/// either the module's facts or {"$error": code}. Stable across runs, processes and
/// serialisation round trips; independent of map insertion order.
/// `registry` says which modules are health checks (their facts are left out, see the .cc).
std::string FactsDigest(const std::map<std::string, Result<modules::Facts>>& facts,
                        const modules::Registry& registry = modules::DefaultRegistry());

/// The snapshot format ("format": "plumb.observed/v1"):
///   {"format":..., "gathered_at":..., "commit"?, "working_tree"?, "shard"?,
///    "selection"?: {"limit", "nodes", "digest"}, "nodes": {"<name>": {"reachable": bool, "error": diag?,
///    "facts": {"<module>": {...}}, "errors": {"<module>": diag}, "raw_digest", "facts_digest",
///    "elapsed_s"}}}
nlohmann::json ToJson(const NodeObservation& n);
nlohmann::json ToJson(const ObservedState& s);
/// The top-level keys other than "format" and "nodes", written and read in one place.
void SnapshotHeaderToJson(const ObservedState& s, nlohmann::json& top);
void SnapshotHeaderFromJson(const nlohmann::json& top, ObservedState& s);
/// One node of a snapshot; the facts are moved out of `j`.
Result<NodeObservation> NodeObservationFromJson(const std::string& name, nlohmann::json j);
/// Reads a snapshot; every problem is a Diagnostic with code "facts.snapshot".
Result<ObservedState> ObservedStateFromJson(const nlohmann::json& j);

/// The planner's view of an observation (PlannerInput::observed). The rvalue form moves the
/// facts instead of copying them.
NodeFacts ToNodeFacts(const NodeObservation& n);
NodeFacts ToNodeFacts(NodeObservation&& n);

/// Streams the snapshot to `out` one node at a time (one line per node), never holding a second
/// copy of every node's facts: the same document ToJson(s) gives. `extra` keys (e.g. a
/// "summary") are added at the top level.
void WriteObservedStateJson(const ObservedState& s, std::ostream& out,
                            const nlohmann::json& extra = nlohmann::json::object());

/// Reads/writes a snapshot file (JSON). Write is atomic (temp file + rename).
Result<ObservedState> ReadObservedState(const std::string& path);
/// Reads a snapshot one node at a time: `each` gets every node (on the calling thread, in file
/// order) as soon as it is parsed, and the node's JSON is dropped right after, so the file is
/// never held as one JSON tree (a 10,000-node snapshot is 60 MB of text but ~800 MB as a
/// tree). A file in the layout WriteObservedStateJson writes (one line per node) is parsed on
/// several threads, a bounded number of nodes ahead of `each`; any other JSON layout is parsed
/// as a stream on this thread. Returns the header (gathered_at) with no nodes. Nodes before a
/// problem later in the file have already been passed to `each`: the caller discards its work
/// on an error.
using ObservationSink = std::function<void(NodeObservation&&)>;
struct ReadOptions {
  size_t workers = 0;                        ///< parsing threads; 0 = one per core (up to 8)
  const std::atomic<bool>* stop = nullptr;   ///< set: stop soon, with an error
};
Result<ObservedState> ReadObservedState(const std::string& path, const ObservationSink& each,
                                        const ReadOptions& opt = {});
Status WriteObservedState(const ObservedState& s, const std::string& path);

}  // namespace plumb::plans
