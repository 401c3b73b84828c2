#pragma once
/// The CLI is thin: each subcommand lives in its own file, adds its command line from cli/
/// (which fills a typed options struct), builds the real transports, and calls one library
/// function. This header is the registration contract between main.cc and those files.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/global_options.h"
#include "schemas/exit_codes.h"   // every command exits with ExitCodeFor(verb, outcome)

namespace plumb::cmd {

/// Options every subcommand shares (cli/global_options.h).
using GlobalOptions = cli::GlobalOptions;

/// A subcommand adds itself to `app` and sets `run` to what executes it once parsed.
using Register = void (*)(CLI::App& app, GlobalOptions& global, std::function<int()>& run);

/// `runs` and `history`'s retired count --limit (cli/command_line.h), when given: says so on
/// stderr and returns the exit code (else -1).
int RefuseRetiredCountLimit(std::string_view verb, const std::string& value);

/// Keeps `big` alive until the process exits and never runs its destructor. Freeing a
/// 10,000-node cluster or run (millions of small allocations: desired state, plan, report)
/// takes ~0.35 s, as long as loading it; the kernel takes a process's memory back at exit at
/// once (mold does the same). Call it once the command's output is written.
template <class T>
void KeepUntilExit(std::unique_ptr<T> big) {
  static auto* kept = new std::vector<std::shared_ptr<void>>();   // never destroyed
  kept->push_back(std::shared_ptr<void>(std::move(big)));
}

}  // namespace plumb::cmd
