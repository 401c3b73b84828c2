#include "plans/bmc_gather.h"

#include <atomic>
#include <thread>

namespace plumb::plans {

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

std::unique_ptr<transport::Bmc> BmcFactory::Open(const BmcTarget& target) const {
  transport::RedfishOptions o;
  o.base_url = target.url;
  o.system = target.system;
  o.node = target.node;
  o.credentials = credentials_;
  o.auth = options_.auth;
  o.request_timeout = options_.request_timeout;
  o.log = options_.log;
  return std::make_unique<transport::RedfishClient>(
      transport::NewCurlHttpClient(engine_, options_.tls), o);
}

std::vector<BmcObservation> GatherBmc(const std::vector<BmcTarget>& targets,
                                      const std::vector<const modules::Module*>& modules,
                                      int fanout, const OpenBmc& open) {
  std::vector<BmcObservation> out(targets.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < targets.size(); i = next++) {
      auto start = std::chrono::steady_clock::now();
      BmcObservation& o = out[i];
      o.node = targets[i].node;
      o.url = targets[i].url;
      try {
        // The client's destructor logs out, whatever happens below.
        std::unique_ptr<transport::Bmc> bmc = open(targets[i]);
        auto root = bmc->ServiceRoot();
        if (!root.ok()) {
          o.error = root.error();
        } else {
          o.reachable = true;
          for (const auto* m : modules) {
            if (!m->HasBmcProbe()) continue;
            o.facts.emplace(std::string(m->Name()), m->ProbeBmc(*bmc));
          }
        }
      } catch (const std::exception& e) {
        o.error = Diagnostic::Error("bmc.internal", targets[i].node + ": " + e.what());
      }
      o.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  };
  int n = std::max(1, std::min<int>(fanout, static_cast<int>(targets.size())));
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return out;
}

nlohmann::json ToJson(const BmcObservation& o) {
  nlohmann::json facts = nlohmann::json::object(), errors = nlohmann::json::object();
  for (const auto& [name, r] : o.facts) {
    if (r.ok()) facts[name] = r.value();
    else errors[name] = r.error().ToJson();
  }
  nlohmann::json j = {{"node", o.node}, {"bmc", o.url}, {"reachable", o.reachable},
                      {"facts", facts}, {"errors", errors}, {"elapsed_s", o.elapsed_s}};
  if (!o.reachable) j["error"] = o.error.ToJson();
  return j;
}

}  // namespace plumb::plans
