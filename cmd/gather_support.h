#pragma once
/// Helpers of `plumb gather`: loading what it needs, the module list, and its text rendering.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmd/command.h"
#include "inventory/model.h"
#include "modules/module.h"
#include "plans/observe/gather.h"
#include "plans/observe/observed.h"
#include "schemas/result.h"

namespace plumb::cmd {

/// The cluster at --repo/--ref (the inventory is all gather needs). Its diagnostics (warnings
/// too) are appended to `diags`; an invalid repo is an error.
Result<inventory::Cluster> LoadClusterForGather(const GlobalOptions& g, Diagnostics& diags);
/// The directory relative known_hosts/identity paths are resolved against.
std::string RepoRoot(const GlobalOptions& g);

/// The combined probe script for `modules` with a fresh nonce.
std::string ProbeScriptFor(const std::vector<const modules::Module*>& modules);

/// "gather: 37/256 nodes (2 unreadable)", rewritten in place as nodes are read; gone when all
/// are. For a terminal only (the caller checks isatty(2)): never in a CI log.
/// Whether the progress line may be drawn: stderr is a terminal that understands \r and
/// erase-line (TERM is not "dumb").
bool ProgressOnStderr();

class NodeProgressLine : public plans::ProgressObserver {
 public:
  explicit NodeProgressLine(std::string label) : label_(std::move(label)) {}
  void OnNodeDone(const plans::NodeObservation& n, size_t done, size_t total) override;

 private:
  std::string label_;
  size_t failed_ = 0;
};

/// "refused", "timeout", "auth", "host key", "host key changed", "io", "probe error".
std::string ReasonFor(const Diagnostic& d);
/// Per node: a line with its status, then one compact line per module and one ERROR line per
/// module problem (modules::ModuleProblems: a module read in part shows both); unreadable nodes
/// with their reason and hint; a closing count that names the nodes with module errors.
std::string RenderGatherText(const plans::ObservedState& s, double wall_s);
nlohmann::json SummaryJson(const plans::ObservedState& s, double wall_s);
/// One line for a module's facts: top-level scalars as key=value, containers as key[n]/key{n}.
std::string CompactFacts(const nlohmann::json& facts, size_t width = 100);

}  // namespace plumb::cmd
