#pragma once
/// FakeShell: a transport::Shell that answers registered commands with canned output and records
/// every command it is asked to run (ninja's FakeCommandRunner). An unregistered command fails
/// with "fake.unregistered" and is listed in `unexpected`, so a test sees any command it did not
/// plan for.
#include <map>
#include <string>
#include <vector>

#include "modules/transport/shell.h"

namespace plumb::testing {

class FakeShell : public transport::Shell {
 public:
  /// `command` (exact text) answers with `exit_status`, `out`, `err`.
  void On(const std::string& command, int exit_status = 0, std::string out = {}, std::string err = {});
  /// `command` answers with each of `outs` in turn (exit 0), the last one again after that:
  /// for a command run before and after a change, whose output the change moves.
  void OnEach(const std::string& command, std::vector<std::string> outs);
  /// `command` cannot be run at all (transport error).
  void Fail(const std::string& command, Diagnostic error);

  Result<transport::CommandOutput> Run(std::string_view command,
                                       std::chrono::milliseconds timeout) override;

  std::vector<std::string> commands_run;
  std::vector<std::string> unexpected;

 private:
  std::map<std::string, transport::CommandOutput, std::less<>> replies_;
  std::map<std::string, std::vector<std::string>, std::less<>> sequences_;   // next first
  std::map<std::string, Diagnostic, std::less<>> failures_;
};

}  // namespace plumb::testing
