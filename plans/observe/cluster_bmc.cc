#include "plans/observe/cluster_bmc.h"

namespace plumb::plans {

OpenBmc ClusterBmcOpener(const inventory::Cluster& c, const std::string& ca_path,
                         Diagnostics& diags, const ConnectBmcs& connect) {
  if (c.bmc.credentials.empty()) {
    diags.Add(Diagnostic::Warning("bmc.not-read", "BMCs not read: defaults.bmc.credentials is not set",
                                  {}, "defaults.bmc.credentials",
                                  "set it (env:VAR or file:/path) to read firmware, bios and power"));
    return {};
  }
  auto open = connect({c.bmc.fingerprint.empty() ? ca_path : "", c.bmc.fingerprint,
                       c.bmc.credentials});
  if (!open.ok()) {
    Diagnostic d = open.error();
    d.severity = Severity::kWarning;
    d.message = "BMCs not read: " + d.message;
    diags.Add(std::move(d));
    return {};
  }
  return open.value();
}

}  // namespace plumb::plans
