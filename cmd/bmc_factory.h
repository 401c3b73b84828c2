#pragma once
/// The real BMC sessions: Redfish clients over one shared libcurl multi engine, credentials read
/// once (their reference only ever printed). Built only in cmd/, the composition root; plans/
/// takes an OpenBmc function (plans/observe/bmc_gather.h).
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "inventory/model.h"
#include "modules/transport/bmc.h"
#include "modules/transport/credentials.h"
#include "modules/transport/curl_http_client.h"
#include "modules/transport/redfish_client.h"
#include "plans/observe/bmc_gather.h"
#include "plans/observe/cluster_bmc.h"
#include "schemas/result.h"

namespace plumb::cmd {

/// How to reach BMCs: TLS policy, credentials reference, auth mode, limits.
struct BmcConnectOptions {
  transport::TlsOptions tls;
  std::string credentials;              ///< "env:VAR" or "file:/path" (never the secret)
  transport::BmcAuth auth = transport::BmcAuth::kAuto;
  long per_bmc_connections = 4;
  std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
  /// How long a firmware task / a reset's power state is waited for (--task-timeout,
  /// --power-timeout).
  std::chrono::milliseconds task_timeout{transport::kDefaultTaskTimeout};
  std::chrono::milliseconds power_timeout{transport::kDefaultPowerTimeout};
  /// Ends every wait on Ctrl-C / SIGTERM (the caller's; may be null).
  const transport::CancelSignal* cancel = nullptr;
  std::function<void(const std::string&)> log;   ///< operator notes (never secrets)
  /// Every wait's progress (the bmc verbs print it); may be empty.
  std::function<void(const transport::WaitProgress&)> progress;

  /// TLS by `ca_file` or `fingerprint` (one of them), the credentials' reference; the rest as
  /// defaulted above.
  static BmcConnectOptions For(std::string ca_file, std::string fingerprint, std::string credentials) {
    BmcConnectOptions o;
    o.tls.ca_file = std::move(ca_file);
    o.tls.fingerprint = std::move(fingerprint);
    o.credentials = std::move(credentials);
    return o;
  }
};

/// Makes one Bmc per target, sharing one curl engine and one credential read.
class BmcFactory {
 public:
  /// Reads the credentials (an error names the reference only).
  static Result<std::shared_ptr<BmcFactory>> Create(const BmcConnectOptions& options);
  std::unique_ptr<transport::Bmc> Open(const plans::BmcTarget& target) const;

 private:
  BmcConnectOptions options_;
  transport::Credentials credentials_;
  std::shared_ptr<transport::CurlEngine> engine_;
};

/// The opener for the cluster's BMCs that gather, plan and drift read with
/// (plans/observe/cluster_bmc.h) over real Redfish sessions. `repo` resolves a relative CA path.
plans::OpenBmc ClusterBmcOpener(const std::string& repo, const inventory::Cluster& cluster,
                                Diagnostics& diags);

}  // namespace plumb::cmd
