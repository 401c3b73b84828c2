#include "fakes/fake_shell.h"

namespace plumb::testing {

void FakeShell::On(const std::string& command, int exit_status, std::string out, std::string err) {
  replies_[command] = transport::CommandOutput{exit_status, std::move(out), std::move(err)};
}

void FakeShell::Fail(const std::string& command, Diagnostic error) {
  failures_.insert_or_assign(command, std::move(error));
}

Result<transport::CommandOutput> FakeShell::Run(std::string_view command,
                                                std::chrono::milliseconds) {
  commands_run.emplace_back(command);
  if (auto f = failures_.find(command); f != failures_.end()) return f->second;
  if (auto r = replies_.find(command); r != replies_.end()) return r->second;
  unexpected.emplace_back(command);
  return Diagnostic::Error("fake.unregistered", "FakeShell: unregistered command: " + std::string(command));
}

}  // namespace plumb::testing
