#pragma once
// Parses a command line through a CLI::App a test built, as main does: `args` are what follows
// the program's name.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace plumb::cli::testing {

inline void ParseArgs(CLI::App& app, std::vector<std::string> args) {
  args.insert(args.begin(), "plumb");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
}

}  // namespace plumb::cli::testing
