#include "cmd/bmc_factory.h"

#include "cmd/repo_load.h"

namespace plumb::cmd {

Result<std::shared_ptr<BmcFactory>> BmcFactory::Create(const BmcConnectOptions& options) {
  auto creds = transport::LoadCredentials(options.credentials);
  if (!creds.ok()) return creds.error();
  if (!options.tls.fingerprint.empty()) {
    auto fp = transport::ParseSha256Fingerprint(options.tls.fingerprint);
    if (!fp.ok()) return fp.error();
  }
  auto f = std::shared_ptr<BmcFactory>(new BmcFactory());
  f->options_ = options;
  f->credentials_ = std::move(creds.value());
  transport::CurlEngineOptions eo;
  eo.max_host_connections = options.per_bmc_connections;
  f->engine_ = transport::StartCurlEngine(eo);
  return f;
}

std::unique_ptr<transport::Bmc> BmcFactory::Open(const plans::BmcTarget& target) const {
  transport::RedfishOptions o;
  o.base_url = target.url;
  o.system = target.system;
  o.node = target.node;
  o.credentials = credentials_;
  o.auth = options_.auth;
  o.request_timeout = options_.request_timeout;
  o.task_deadline = options_.task_timeout;
  o.power_deadline = options_.power_timeout;
  o.cancel = options_.cancel;
  o.log = options_.log;
  o.progress = options_.progress;
  return std::make_unique<transport::RedfishClient>(
      transport::NewCurlHttpClient(engine_, options_.tls), o);
}

plans::OpenBmc ClusterBmcOpener(const std::string& repo, const inventory::Cluster& c,
                                Diagnostics& diags) {
  auto connect = [](const plans::BmcSettings& s) -> Result<plans::OpenBmc> {
    auto factory = BmcFactory::Create(BmcConnectOptions::For(s.ca_file, s.fingerprint, s.credentials));
    if (!factory.ok()) return factory.error();
    std::shared_ptr<BmcFactory> f = factory.value();
    return plans::OpenBmc([f](const plans::BmcTarget& t) { return f->Open(t); });
  };
  return plans::ClusterBmcOpener(c, RepoPath(repo, c.bmc.ca), diags, connect);
}

}  // namespace plumb::cmd
