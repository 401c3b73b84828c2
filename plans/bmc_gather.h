#pragma once
/// Redfish-only gather: firmware, BIOS and power facts of every node with a BMC, straight from
/// the BMCs, so it works when a node's OS is down. Fan-out: `fanout` nodes at once, all their
/// requests multiplexed on one libcurl multi handle (transport/curl_http_client.h), at most
/// `per_bmc_connections` connections to any one BMC. One session per BMC, always logged out.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/module.h"
#include "modules/transport/bmc.h"
#include "modules/transport/curl_http_client.h"
#include "modules/transport/redfish_client.h"
#include "schemas/result.h"

namespace plumb::plans {

struct BmcTarget {
  std::string node;
  std::string url;      ///< https://...
  std::string system;   ///< the node's ComputerSystem Id on a shared BMC (bmc_system), or ""
};

/// How to reach BMCs: TLS policy, credentials reference, auth mode, limits.
struct BmcConnectOptions {
  transport::TlsOptions tls;
  std::string credentials;              ///< "env:VAR" or "file:/path" (never the secret)
  transport::BmcAuth auth = transport::BmcAuth::kAuto;
  long per_bmc_connections = 4;
  std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
  std::function<void(const std::string&)> log;   ///< operator notes (never secrets)
};

/// Makes one Bmc per target, sharing one curl engine and one credential read.
class BmcFactory {
 public:
  /// Reads the credentials (an error names the reference only).
  static Result<std::shared_ptr<BmcFactory>> Create(const BmcConnectOptions& options);
  std::unique_ptr<transport::Bmc> Open(const BmcTarget& target) const;

 private:
  BmcConnectOptions options_;
  transport::Credentials credentials_;
  std::shared_ptr<transport::CurlEngine> engine_;
};

using OpenBmc = std::function<std::unique_ptr<transport::Bmc>(const BmcTarget&)>;

struct BmcObservation {
  std::string node;
  std::string url;
  bool reachable = false;   ///< the service root answered
  Diagnostic error;         ///< why not, when !reachable
  std::map<std::string, Result<modules::Facts>> facts;   ///< by module name
  double elapsed_s = 0;
};

/// Gathers every `modules` entry that HasBmcProbe() from each target; `fanout` targets at once.
/// Results in target order. Never throws.
std::vector<BmcObservation> GatherBmc(const std::vector<BmcTarget>& targets,
                                      const std::vector<const modules::Module*>& modules,
                                      int fanout, const OpenBmc& open);

/// {"node", "bmc", "reachable", "error"?, "facts": {module: facts}, "errors": {module: diag},
///  "elapsed_s"}
nlohmann::json ToJson(const BmcObservation& o);

}  // namespace plumb::plans
