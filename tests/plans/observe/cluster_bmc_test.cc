// The read's BMC opener for the cluster (plans/observe/cluster_bmc.h): the settings it
// connects with, and a warning, not a failure, when the BMCs cannot be read.
#include <doctest/doctest.h>

#include "plans/observe/cluster_bmc.h"

using namespace plumb;

namespace {

inventory::Cluster BmcCluster(std::string fingerprint, std::string credentials) {
  inventory::Cluster c;
  c.bmc.ca = "certs/bmc-ca.pem";
  c.bmc.fingerprint = std::move(fingerprint);
  c.bmc.credentials = std::move(credentials);
  return c;
}

}  // namespace

TEST_CASE("cluster_bmc: the CA path, or only the pinned fingerprint, with the credentials") {
  std::vector<plans::BmcSettings> asked;
  auto connect = [&](const plans::BmcSettings& s) -> Result<plans::OpenBmc> {
    asked.push_back(s);
    return plans::OpenBmc([](const plans::BmcTarget&) { return std::unique_ptr<transport::Bmc>(); });
  };
  Diagnostics diags;
  CHECK(plans::ClusterBmcOpener(BmcCluster("", "env:BMC"), "/repo/certs/bmc-ca.pem", diags, connect));
  CHECK(plans::ClusterBmcOpener(BmcCluster("sha256:AA", "file:/etc/bmc"), "/repo/certs/bmc-ca.pem",
                                diags, connect));
  CHECK(diags.items().empty());
  REQUIRE(asked.size() == 2);
  CHECK(asked[0].ca_file == "/repo/certs/bmc-ca.pem");
  CHECK(asked[0].fingerprint.empty());
  CHECK(asked[0].credentials == "env:BMC");
  CHECK(asked[1].ca_file.empty());   // the pin sets the CA aside
  CHECK(asked[1].fingerprint == "sha256:AA");
  CHECK(asked[1].credentials == "file:/etc/bmc");
}

TEST_CASE("cluster_bmc: no credentials, or none readable: no opener, and a warning saying why") {
  int connects = 0;
  Diagnostics diags;
  CHECK_FALSE(plans::ClusterBmcOpener(BmcCluster("", ""), "/ca.pem", diags,
                                      [&](const plans::BmcSettings&) -> Result<plans::OpenBmc> {
                                        ++connects;
                                        return plans::OpenBmc{};
                                      }));
  CHECK(connects == 0);
  REQUIRE(diags.items().size() == 1);
  CHECK(diags.items()[0].severity == Severity::kWarning);
  CHECK(diags.items()[0].code == "bmc.not-read");
  CHECK(diags.items()[0].key_path == "defaults.bmc.credentials");

  Diagnostics unreadable;
  CHECK_FALSE(plans::ClusterBmcOpener(
      BmcCluster("", "env:NOPE"), "/ca.pem", unreadable,
      [](const plans::BmcSettings&) -> Result<plans::OpenBmc> {
        return Diagnostic::Error("bmc.credentials", "env:NOPE is not set");
      }));
  REQUIRE(unreadable.items().size() == 1);
  CHECK(unreadable.items()[0].severity == Severity::kWarning);
  CHECK(unreadable.items()[0].code == "bmc.credentials");
  CHECK(unreadable.items()[0].message == "BMCs not read: env:NOPE is not set");
  CHECK_FALSE(unreadable.HasErrors());
}
