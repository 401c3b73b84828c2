#pragma once
/// A ShellFactory for read-run and gather tests: it records every node a shell was opened for
/// (from the gather's worker threads, under `mu`) and gives each a local /bin/sh, except the
/// nodes in `refused` (every node with `refuse_all`), whose shell refuses the connection the
/// way an SSH server that is down does.
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "modules/transport/local_shell.h"
#include "plans/observe/gather.h"

namespace plumb::fakes {

struct RecordingShells : plans::ShellFactory {
  struct Refused : transport::Shell {
    Result<transport::CommandOutput> Run(std::string_view, std::chrono::milliseconds) override {
      return Diagnostic::Error("ssh.refused", "connection refused");
    }
  };
  std::unique_ptr<transport::Shell> Open(const inventory::Node& n) override {
    std::lock_guard<std::mutex> lock(*mu);
    opened->insert(n.name);
    if (refuse_all || refused.count(n.name) > 0) return std::make_unique<Refused>();
    return std::make_unique<transport::LocalShell>();
  }
  std::set<std::string>* opened = nullptr;
  std::mutex* mu = nullptr;
  std::set<std::string> refused;
  bool refuse_all = false;
};

}  // namespace plumb::fakes
