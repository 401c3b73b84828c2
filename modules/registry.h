#pragma once
/// The module table (ninja's ChooseTool): every module plumb knows, in a stable order.
#include <string_view>
#include <utility>
#include <vector>

#include "modules/module.h"

namespace plumb::modules {

/// A set of modules and the questions asked of it: what plans/ is given instead of calling the
/// global table, so a test with a fake module gets that module's rules (its disruption, whether
/// it is a health check...), not the real modules'. A view: it does not own the modules.
class Registry {
 public:
  explicit Registry(std::vector<const Module*> modules) : modules_(std::move(modules)) {}
  /// Every module, in order.
  const std::vector<const Module*>& All() const { return modules_; }
  /// The module called `name`, or nullptr.
  const Module* Find(std::string_view name) const;
  /// The module that checks the desired-state pointer `p` (the longest of its `owns` that
  /// holds `p`), or nullptr.
  const Module* OwnerOf(std::string_view pointer) const;

 private:
  std::vector<const Module*> modules_;
};

/// Every module plumb has (AllModules()).
const Registry& DefaultRegistry();

/// All modules, in-band first; the pointers live for the whole program.
const std::vector<const Module*>& AllModules();
/// The module called `name`, or nullptr.
const Module* FindModule(std::string_view name);
/// The module that checks the desired-state pointer `p` ("/nvidia/driver" -> nvidia_driver),
/// from each module's ModuleInfo::owns; nullptr when no module does (validate refuses such a
/// pin; drift reports it unchecked).
const Module* OwnerOf(std::string_view pointer);

}  // namespace plumb::modules
