#pragma once
/// One node's last observation as the watch keeps it between rounds: what the planner needs
/// (plans::NodeFacts), with the facts stored as CBOR. A parsed JSON tree costs several times
/// its text in small allocations; at 1024 nodes kept for hours the compact form is what keeps
/// memory flat (README "Watching drift", bench/README.md).
#include <map>
#include <string>
#include <vector>

#include "modules/module.h"
#include "plans/observe/observed.h"
#include "plans/plan/planner.h"

namespace plumb::plans::watch {

struct KeptFacts {
  bool readable = false;
  std::string unreadable_reason;
  std::vector<std::uint8_t> facts_cbor;              ///< module -> facts (readable parts)
  std::map<std::string, std::string> module_errors;  ///< as NodeFacts::module_errors
  std::string facts_digest;

  /// From a fresh observation (its facts are moved out).
  static KeptFacts From(NodeObservation&& obs);
  /// Back to the planner's form.
  NodeFacts ToNodeFacts() const;
};

/// The id of the boot a node is in, from the module of `modules` whose facts name it
/// (ModuleInfo::boot_id_key: kernel's "boot_id"); "" when it was not read.
std::string BootIdOf(const NodeObservation& obs, const std::vector<const modules::Module*>& modules);

}  // namespace plumb::plans::watch
