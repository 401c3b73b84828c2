#pragma once
/// The operator's declared values: a cluster repo at one commit, as typed data.
/// Built by inventory/load (YAML at a git ref) and validated before anything uses it.
/// Desired state stays JSON at this boundary (each module reads its own keys), with a map from
/// each JSON pointer to the file:line it came from, so any value can be traced to its origin.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/shared_value.h"
#include "schemas/diagnostics.h"

namespace plumb::inventory {

/// Where the model was read from. `commit` is the full 40-hex SHA the ref resolved to; it travels
/// with every plan, report and journal entry. In working-tree mode `commit` is the HEAD commit
/// and `working_tree` is true (uncommitted edits included: never good enough for apply).
struct Source {
  std::string repo;     ///< path of the cluster repo
  std::string ref;      ///< what the user asked for ("HEAD", "main", "v1.2", a short SHA)
  std::string commit;   ///< resolved full SHA
  bool working_tree = false;
};

/// JSON pointer ("/nvidia/driver") -> where that value was written.
using OriginMap = std::map<std::string, Location>;

struct SshSettings {
  std::string user = "root";
  int port = 22;
  std::string known_hosts;   ///< repo-relative or absolute path; host keys are always verified
  std::string identity;      ///< private key path; empty = ssh-agent
  int connect_timeout_s = 10;
  int command_timeout_s = 120;
  /// defaults.ssh.jump: the bastion every node is reached through unless its group or itself
  /// says otherwise (OpenSSH ProxyJump's [user@]host[:port]; "none" = direct). See JumpSpec.
  std::string jump;
};

/// A bastion as written: [user@]host[:port], host a name, an IPv4 address or [IPv6].
struct JumpSpec {
  std::string user;   ///< empty = the nodes' defaults.ssh.user
  std::string host;
  int port = 22;
  std::string ToString() const;   ///< "user@host:port" as given (user and port when set)
};
/// Parses a jump as the schema's pattern admits it; nullopt for "", "none" or anything else.
std::optional<JumpSpec> ParseJump(const std::string& text);

struct BmcSettings {
  std::string ca;            ///< CA bundle path for BMC TLS
  std::string fingerprint;   ///< or a pinned SHA-256 certificate fingerprint
  std::string credentials;   ///< a reference, never the secret: "env:VAR" or "file:/path" (0600)
};

struct Node {
  std::string name;
  std::string address;               ///< host name or IP the SSH transport connects to
  std::optional<int> ssh_port;       ///< overrides defaults.ssh.port
  /// The bastion this node is reached through ("" = directly): its own `ssh.jump`, else the
  /// nearest group's (picked like the stack), else defaults.ssh.jump; "none" at any level
  /// means direct. Resolved by the loader.
  std::string ssh_jump;
  std::string ssh_jump_own;          ///< the node's own `ssh: { jump }`, as written
  std::string bmc;                   ///< BMC base URL (https://...), empty if none
  /// The node's ComputerSystem on its BMC (its Id, e.g. "Node1"), for a BMC that manages several
  /// systems (an HPE Cray EX blade: two nodes, one BMC); empty = the BMC's only system.
  std::string bmc_system;
  std::string rack, leaf, nvlink_domain;   ///< failure-domain labels
  std::vector<std::string> groups;
  std::map<std::string, std::string> labels;
  Location where;                    ///< the node's entry in inventory.yaml

  /// The failure-domain label named `by` ("rack", "leaf", "nvlink_domain", or a label key).
  std::string Domain(const std::string& by) const;
};

struct Group {
  std::string name;
  std::vector<std::string> parents;  ///< inherited first, in order
  std::string stack;                 ///< name of a stack file, empty = inherit
  std::string rollout;               ///< name of a rollout policy, empty = inherit
  std::string ssh_jump;              ///< `ssh: { jump }` of the group, empty = inherit
  nlohmann::json overrides = nlohmann::json::object();  ///< desired-state keys set by the group
  OriginMap override_origins;
  Location where;
};

/// A stack: what a node group must run (stacks/<name>.yaml). Keys per module.
struct Stack {
  std::string name;
  std::string file;
  nlohmann::json pins = nlohmann::json::object();
  OriginMap origins;
};

enum class DrainScheduler { kSlurm, kKubernetes, kNone };
enum class DomainMode { kAligned, kSpread };

/// How changes roll (rollouts/<name>.yaml).
struct RolloutPolicy {
  std::string name;
  std::string file;
  DrainScheduler scheduler = DrainScheduler::kSlurm;
  int drain_timeout_s = 4 * 3600;
  /// How long apply waits for an unreachable scheduler before it pauses the run.
  int scheduler_timeout_s = 600;
  /// max_unavailable as written: a count ("4") or a percent ("10%").
  int max_unavailable_count = 1;
  bool max_unavailable_is_percent = false;
  std::string domain_by;                       ///< "" = no failure-domain constraint
  DomainMode domain_mode = DomainMode::kSpread;
  int domain_at_once = 1;
  int canary = 1;
  int max_failures = 0;
  std::vector<std::string> health;             ///< gate commands, run on the node
  int health_timeout_s = 300;
  /// What apply does with a node that fails a health check (a gpu_health / ib_health finding)
  /// and has changes. kSkip (the default): leave it as it is - the plan shows it skipped, in no
  /// batch, and a node that fails a check only by the time apply reaches it is skipped as
  /// stale; repair it, then plan again. kChange: change it like the others and judge it after
  /// the change (the health step: a reboot may clear what failed); still failing, it stays
  /// drained, failed, and counts against max_failures.
  enum class Unhealthy { kSkip, kChange };
  Unhealthy unhealthy = Unhealthy::kSkip;
  std::string window_cron;                     ///< empty = always
  int window_duration_s = 0;
  Location where;

  /// max_unavailable resolved against a cluster of `total` nodes (at least 1).
  int MaxUnavailable(int total) const;
};

/// A justified exception: matching node and key are shown as waived (plan, drift) and never
/// changed by apply, until `expires`.
struct Waiver {
  std::string nodes;    ///< node pattern: host list or glob (inventory/node_pattern.h)
  std::string keys;     ///< glob over desired keys ("sysctl.*")
  std::string reason, owner;
  std::string expires;  ///< YYYY-MM-DD
  Location where;
  int index = 0;          ///< its place in waivers.yaml's list: "waivers[2].expires"
  Location expires_at;    ///< where `expires` is written (else `where`)
  Location nodes_at;      ///< where `nodes` is written (else `where`)
};

/// The whole cluster repo at one commit.
struct Cluster {
  Source source;
  std::string name;
  SshSettings ssh;
  BmcSettings bmc;
  std::vector<Node> nodes;
  std::map<std::string, Group> groups;
  std::map<std::string, Stack> stacks;
  std::map<std::string, RolloutPolicy> rollouts;
  std::vector<Waiver> waivers;

  const Node* FindNode(const std::string& name) const;
};

/// One node's merged desired state: what plumb must make true on it. The merged values depend
/// only on the node's groups, so nodes with the same groups share them (Shared: read freely,
/// `.Mut()` to write); `desired.SameAs(other.desired)` says two nodes want the very same thing.
struct NodeDesired {
  std::string node;
  std::string stack;     ///< the stack that applied (after inheritance)
  std::string rollout;   ///< the rollout policy that applied
  Shared<nlohmann::json> desired{nlohmann::json::object()};
  Shared<OriginMap> origins;     ///< every leaf pointer in `desired` -> file:line:col
  /// Groups in merge order (ancestors first, then the node's groups as listed; each once).
  std::vector<std::string> groups;
  std::string stack_from;    ///< the group whose stack applied
  std::string rollout_from;  ///< the group whose rollout applied
  /// Leaf pointer -> the layer that set it: "stack <name>" or "group <name>".
  Shared<std::map<std::string, std::string>> layers;

  /// Where the value at `pointer` was written: its own origin, or the nearest parent's (a map
  /// written as a whole, e.g. `packages: {...}` from a stack). Empty when unknown.
  Location OriginOf(std::string pointer) const;
  /// The desired value at `pointer`, or null when absent (or the pointer is malformed).
  nlohmann::json ValueAt(const std::string& pointer) const;
};

}  // namespace plumb::inventory
