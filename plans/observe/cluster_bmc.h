#pragma once
/// The BMC opener a read (gather, plan, drift) uses for the cluster's BMCs, from defaults.bmc:
/// its CA (set aside when a fingerprint is pinned) or fingerprint, and its credentials. A read
/// goes on without the BMCs - a warning says why - when no credentials are set or they cannot
/// be read. cmd/ connects (the real Redfish sessions); tested in
/// tests/plans/observe/cluster_bmc_test.cc.
#include <functional>
#include <string>

#include "inventory/model.h"
#include "plans/observe/bmc_gather.h"
#include "schemas/result.h"

namespace plumb::plans {

/// How the BMCs are reached: exactly one of the CA file and the fingerprint is set.
struct BmcSettings {
  std::string ca_file, fingerprint, credentials;
};
using ConnectBmcs = std::function<Result<OpenBmc>(const BmcSettings&)>;

/// `connect` with the cluster's settings (`ca_path`: bmc.ca resolved against the repo); empty,
/// with a warning in `diags`, when the cluster names no credentials or `connect` fails.
OpenBmc ClusterBmcOpener(const inventory::Cluster& cluster, const std::string& ca_path,
                         Diagnostics& diags, const ConnectBmcs& connect);

}  // namespace plumb::plans
