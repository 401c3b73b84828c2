#pragma once
/// The module table (ninja's ChooseTool): every module plumb knows, in a stable order.
#include <string_view>
#include <vector>

#include "modules/module.h"

namespace plumb::modules {

/// All modules, in-band first; the pointers live for the whole program.
const std::vector<const Module*>& AllModules();
/// The module called `name`, or nullptr.
const Module* FindModule(std::string_view name);
/// The module that checks the desired-state pointer `p` ("/nvidia/driver" -> nvidia_driver),
/// from each module's ModuleInfo::owns; nullptr when no module does (validate refuses such a
/// pin; drift reports it unchecked).
const Module* OwnerOf(std::string_view pointer);

}  // namespace plumb::modules
