#pragma once
/// Gather: read every node's live state, one SSH session and one round trip per node, a bounded
/// number of nodes at a time. Each in-band module contributes a probe snippet; the snippets run
/// as one script with per-run section markers, and each module parses its own section.
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "inventory/model.h"
#include "modules/module.h"
#include "modules/transport/shell.h"
#include "plans/observe/observed.h"

namespace plumb::plans {

/// Makes the shell for one node. The real one (SshShellFactory, plans/ssh_factory.h) makes
/// transport::SshShell; tests use a fake. Called from worker threads concurrently: must be
/// thread-safe. The returned shell is used by one thread and destroyed after the node's probe.
class ShellFactory {
 public:
  virtual ~ShellFactory() = default;
  virtual std::unique_ptr<transport::Shell> Open(const inventory::Node& node) = 0;
};

struct GatherOptions {
  /// At most this many nodes are probed at once (one thread and one SSH session each).
  int fanout = 64;
  /// Limit for the probe round trip of one node (connect excluded: that is the shell's own).
  std::chrono::milliseconds command_timeout{std::chrono::minutes(2)};
  /// Section-marker nonce; empty = a fresh random one per run (set only by tests).
  std::string nonce;
};

/// Watches a gather as it goes (progress line on a TTY). Calls are serialised by Gather.
class ProgressObserver {
 public:
  virtual ~ProgressObserver() = default;
  virtual void OnNodeDone(const NodeObservation& node, size_t done, size_t total) = 0;
};

/// The modules a read of these nodes needs: every module, except the health modules no node's
/// desired state pins (`desired`: node -> its merged desired state). Their probes would run
/// nvidia-smi's health query, the kernel log and perfquery on every port of every node for
/// nothing. `plumb gather`, a dump of everything, reads them all.
std::vector<const modules::Module*> ModulesToRead(
    const std::vector<const modules::Module*>& all,
    const std::map<std::string, inventory::NodeDesired>& desired);

/// Probes `nodes` with the in-band probes of `modules` (modules without one are skipped) and
/// returns one NodeObservation per node: never throws, never stops at a failing node.
ObservedState Gather(const std::vector<const inventory::Node*>& nodes,
                     const std::vector<const modules::Module*>& modules, ShellFactory& shells,
                     const GatherOptions& options = {}, ProgressObserver* progress = nullptr);

/// Probes one node over an already made `shell` (apply's re-probe before and after a change
/// reuses its session this way). `nonce` empty = a fresh random one.
NodeObservation ProbeNode(const std::string& node, transport::Shell& shell,
                          const std::vector<const modules::Module*>& modules,
                          std::chrono::milliseconds timeout, const std::string& nonce = {});

/// ProbeNode with a fresh nonce, for a caller that keeps each node's last observation (plumb
/// watch). The script is wrapped (modules::WrapReprobe) so the node prints its output in one
/// go, or, when it is byte for byte what it printed last time (`last_raw_digest`, the nonce
/// aside), only a short "unchanged" line. Either way an unchanged output (and exit 0) is not
/// parsed again: `*unchanged` is set and the observation carries the raw digest and no facts
/// (the caller's are still right). Otherwise it is ProbeNode's observation and `*unchanged` is
/// false. The script runs through `shell.RunRepeated` (a command loop kept on the node).
NodeObservation ProbeNodeIfChanged(const std::string& node, transport::Shell& shell,
                                   const std::vector<const modules::Module*>& modules,
                                   std::chrono::milliseconds timeout,
                                   const std::string& last_raw_digest, bool* unchanged);

/// A fresh 128-bit random nonce, hex.
std::string NewNonce();

}  // namespace plumb::plans
