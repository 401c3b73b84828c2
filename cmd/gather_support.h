#pragma once
/// What the verbs that read nodes share at the edge: where relative paths resolve, the probe
/// script, and whether stderr draws a progress line.
#include <string>
#include <vector>

#include "cmd/command.h"
#include "modules/module.h"

namespace plumb::cmd {

/// The directory relative known_hosts/identity paths are resolved against.
std::string RepoRoot(const GlobalOptions& g);

/// The combined probe script for `modules` with a fresh nonce.
std::string ProbeScriptFor(const std::vector<const modules::Module*>& modules);

/// Whether the progress line (plans/observe/node_progress.h) may be drawn: stderr is a terminal
/// that understands \r and erase-line (TERM is not "dumb").
bool ProgressOnStderr();

}  // namespace plumb::cmd
