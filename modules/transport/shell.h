#pragma once
/// Shell: run one command on one node. The real one is SSH (ssh_shell.h, libssh); tests use
/// FakeShell (tests/fakes). libssh's headers never appear outside ssh_shell.cc.
#include <chrono>
#include <string>
#include <string_view>

#include "schemas/result.h"

namespace plumb::transport {

struct CommandOutput {
  int exit_status = 0;
  std::string out;
  std::string err;
};

class Shell {
 public:
  virtual ~Shell() = default;
  /// Runs `command` with /bin/sh on the node. A non-zero exit is a CommandOutput, not an error;
  /// an error is "could not run it" (refused, timeout, auth, host key), with a code
  /// "ssh.refused", "ssh.timeout", "ssh.auth", "ssh.hostkey", "ssh.io".
  virtual Result<CommandOutput> Run(std::string_view command,
                                    std::chrono::milliseconds timeout) = 0;
  /// Runs `command` as Run does, for a caller that runs commands on this node again and again
  /// (plumb watch): a shell may keep a helper on the node between calls so that each costs one
  /// request and one reply (SshShell: a command loop on one open channel, command_loop.h).
  /// Same results and errors as Run.
  virtual Result<CommandOutput> RunRepeated(std::string_view command, std::chrono::milliseconds timeout) {
    return Run(command, timeout);
  }
};

/// Quotes `value` for POSIX sh as one word: 'it'\''s'. Every value that reaches a remote shell
/// goes through this (after the schema's pattern has already rejected hostile input).
std::string ShellQuote(std::string_view value);

}  // namespace plumb::transport
