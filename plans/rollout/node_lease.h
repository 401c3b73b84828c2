#pragma once
/// Node leases: one writer per node, whoever runs plumb and from wherever. The cluster lock
/// lives in a journal, so two journals (a CI runner with an empty workspace, PLUMB_JOURNAL=other)
/// each hold "the" lock; the lease lives on the node itself, where every run must pass.
///
/// Before plumb touches a node it takes the node's lease: an atomic check-and-write (under
/// flock(1)) of /var/lib/plumb/lease, holding the run id, controller host, pid, user and an
/// expiry in the node's own clock. A lease another run holds and has not let expire means that
/// node is busy: plumb leaves it alone and reports it. An expired lease may be taken over; the
/// reply says whose it was, and the journal records it. The holder renews it while it works
/// (and before a reboot, for the reboot's whole timeout) and releases it once the node is back
/// in service or its failure is recorded.
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "plans/core/clock.h"
#include "schemas/result.h"

namespace plumb::plans {

class NodeTransport;

struct LeaseHolder {
  std::string run;
  std::string host;      ///< the controller's host name
  int64_t pid = 0;
  std::string user;
  int64_t expires = 0;   ///< unix seconds, in the node's clock
};

struct LeaseReply {
  enum class Kind {
    kTaken,       ///< ours now (fresh, renewed, or already ours)
    kTookOver,    ///< ours now; `other` had let it expire
    kHeld,        ///< `other` holds it and it has not expired: busy
    kLost,        ///< (renew) not ours any more: `other` holds it, or nobody
    kReleased,
  };
  Kind kind = Kind::kTaken;
  LeaseHolder other;
};

class NodeLeases {
 public:
  virtual ~NodeLeases() = default;
  /// Takes (or renews, when ours) the lease on `node` for `ttl` from now.
  virtual Result<LeaseReply> Acquire(const std::string& node, const LeaseHolder& me,
                                     std::chrono::seconds ttl) = 0;
  /// Pushes our lease's expiry; kLost when it is no longer ours.
  virtual Result<LeaseReply> Renew(const std::string& node, const LeaseHolder& me,
                                   std::chrono::seconds ttl) = 0;
  /// Removes our lease: the one this very process (`me`: run, host, pid) holds, never another
  /// run's, nor this run's taken over by another process.
  virtual Status Release(const std::string& node, const LeaseHolder& me) = 0;
};

/// The real leases: a short sh script over a fresh connection from `transport`.
/// `dir` is where the lease lives on the node.
std::unique_ptr<NodeLeases> MakeShellLeases(NodeTransport& transport,
                                            std::string dir = "/var/lib/plumb",
                                            std::chrono::milliseconds timeout = std::chrono::seconds(60));

/// The script for `op` ("acquire", "renew", "release"); every value quoted. Exposed for tests.
std::string LeaseScript(std::string_view op, const std::string& dir, const LeaseHolder& me,
                        std::chrono::seconds ttl);
/// The script's stdout -> what happened; an error when it is not the script's answer.
Result<LeaseReply> ParseLeaseReply(std::string_view out);

}  // namespace plumb::plans
