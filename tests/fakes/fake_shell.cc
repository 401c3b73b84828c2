#include "fakes/fake_shell.h"

namespace plumb::testing {

void FakeShell::On(const std::string& command, int exit_status, std::string out, std::string err) {
  replies_[command] = transport::CommandOutput{exit_status, std::move(out), std::move(err)};
}

void FakeShell::OnEach(const std::string& command, std::vector<std::string> outs) {
  sequences_[command] = std::move(outs);
}

void FakeShell::Fail(const std::string& command, Diagnostic error) {
  failures_.insert_or_assign(command, std::move(error));
}

Result<transport::CommandOutput> FakeShell::Run(std::string_view command,
                                                std::chrono::milliseconds) {
  commands_run.emplace_back(command);
  if (auto f = failures_.find(command); f != failures_.end()) return f->second;
  if (auto r = replies_.find(command); r != replies_.end()) return r->second;
  if (auto q = sequences_.find(command); q != sequences_.end() && !q->second.empty()) {
    std::string out = q->second.front();
    if (q->second.size() > 1) q->second.erase(q->second.begin());
    return transport::CommandOutput{0, std::move(out), {}};
  }
  unexpected.emplace_back(command);
  return Diagnostic::Error("fake.unregistered", "FakeShell: unregistered command: " + std::string(command));
}

}  // namespace plumb::testing
