#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "modules/transport/credentials.h"
#include "modules/transport/curl_http_client.h"
#include "modules/transport/reset_plan.h"
#include "modules/transport/redfish_messages.h"
#include "modules/transport/url.h"

namespace plumb::transport {

TEST_CASE("url: the origin a reference resolves to, comparable and without userinfo") {
  const std::string base = "https://bmc.example/redfish/v1/Systems/1";
  CHECK(ResolvedOrigin(base, "/redfish/v1/systems/1/").value() == "https://bmc.example:443");
  CHECK(ResolvedOrigin(base, "https://BMC.example:443/x").value() == "https://bmc.example:443");
  CHECK(ResolvedOrigin(base, "https://10.1.2.3/redfish/v1/").value() == "https://10.1.2.3:443");
  CHECK(ResolvedOrigin(base, "https://bmc.example:8443/x").value() == "https://bmc.example:8443");
  CHECK(ResolvedOrigin(base, "//other.example/x").value() == "https://other.example:443");
  CHECK(ResolvedOrigin(base, "https://u:s3cret-PLANTED@bmc.example/").value() == "https://bmc.example:443");
  CHECK(ResolvedOrigin("https://127.0.0.1:8443", "https://127.0.0.1:8443").value() == "https://127.0.0.1:8443");
}

TEST_CASE("url: references resolve by RFC 3986 and stay on our origin") {
  const std::string o = "https://127.0.0.1:8443";
  CHECK(ResolveOnOrigin(o, o + "/redfish/v1/", "/redfish/v1/Systems/1").value() ==
        o + "/redfish/v1/Systems/1");
  CHECK(ResolveOnOrigin(o, o + "/redfish/v1/SessionService/Sessions", "Sessions/4").value() ==
        o + "/redfish/v1/SessionService/Sessions/4");
  CHECK(ResolveOnOrigin(o, o + "/redfish/v1/", "https://10.0.0.9/redfish/v1/TaskService/Tasks/1").value() ==
        o + "/redfish/v1/TaskService/Tasks/1");
  CHECK(ResolveOnOrigin(o, o + "/redfish/v1/", "/redfish/v1/systems/1/bios/settings/").value() ==
        o + "/redfish/v1/systems/1/bios/settings/");
  CHECK(ResolveOnOrigin(o, o + "/redfish/v1/", "/redfish/v1/C?$skip=2").value() ==
        o + "/redfish/v1/C?$skip=2");
  CHECK(OriginOf("https://bmc.example:8443/redfish/v1/").value() == "https://bmc.example:8443");
  CHECK_FALSE(OriginOf("ftp://bmc.example").ok());
  // Plain http would carry the password in clear text: refused, with the reason.
  auto plain = OriginOf("http://bmc.example/redfish/v1/");
  REQUIRE_FALSE(plain.ok());
  CHECK(plain.error().hint.find("clear text") != std::string::npos);
  // A URL with a user or password is refused without being echoed.
  auto userinfo = OriginOf("https://admin:s3cret-PLANTED@bmc.example/");
  REQUIRE_FALSE(userinfo.ok());
  CHECK(userinfo.error().ToString().find("s3cret-PLANTED") == std::string::npos);
  CHECK(userinfo.error().ToString().find("bmc.example") != std::string::npos);
}

TEST_CASE("credentials: a secret typed where its reference belongs is not echoed back") {
  auto typed = LoadCredentials("root:s3cret-PLANTED");
  REQUIRE_FALSE(typed.ok());
  CHECK(typed.error().ToString().find("s3cret-PLANTED") == std::string::npos);
  CHECK(typed.error().message.find("env:VAR") != std::string::npos);
  auto missing = LoadCredentials("env:PLUMB_TEST_NOT_SET_ANYWHERE");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("env:PLUMB_TEST_NOT_SET_ANYWHERE") != std::string::npos);
}

TEST_CASE("credentials: env and 0600 file - group-readable files refused - secret never in errors") {
  ::setenv("PLUMB_TEST_BMC", "admin:s3cret-PLANTED", 1);
  auto c = LoadCredentials("env:PLUMB_TEST_BMC");
  REQUIRE(c.ok());
  CHECK(c.value().user == "admin");
  CHECK(c.value().password.Reveal() == "s3cret-PLANTED");
  CHECK_FALSE(LoadCredentials("env:PLUMB_TEST_NOPE").ok());
  ::setenv("PLUMB_TEST_BAD", "s3cret-PLANTED", 1);   // no "user:"
  auto bad = LoadCredentials("env:PLUMB_TEST_BAD");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().ToString().find("s3cret-PLANTED") == std::string::npos);

  char tmpl[] = "/tmp/plumb-cred-XXXXXX";
  int fd = ::mkstemp(tmpl);
  REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream(tmpl) << "root:s3cret-PLANTED\n";
  ::chmod(tmpl, 0644);
  auto loose = LoadCredentials(std::string("file:") + tmpl);
  REQUIRE_FALSE(loose.ok());
  CHECK(loose.error().message.find("0644") != std::string::npos);
  CHECK(loose.error().ToString().find("s3cret-PLANTED") == std::string::npos);
  ::chmod(tmpl, 0600);
  auto tight = LoadCredentials(std::string("file:") + tmpl);
  REQUIRE(tight.ok());
  CHECK(tight.value().user == "root");
  CHECK(tight.value().password.Reveal() == "s3cret-PLANTED");
  ::unlink(tmpl);
  CHECK_FALSE(LoadCredentials("vault:x").ok());
}

TEST_CASE("fingerprint: sha256 with or without colons - malformed refused") {
  std::string hex(64, 'a');
  CHECK(ParseSha256Fingerprint("sha256:" + hex).value().size() == 32);
  std::string colons;
  for (int i = 0; i < 32; ++i) colons += (i ? ":" : "") + std::string("AB");
  CHECK(ParseSha256Fingerprint("sha256:" + colons).value() == std::string(32, '\xab'));
  CHECK_FALSE(ParseSha256Fingerprint("sha256:abcd").ok());
  CHECK_FALSE(ParseSha256Fingerprint("sha256:" + std::string(64, 'z')).ok());
}

TEST_CASE("reset plan: fallbacks per kind") {
  using V = std::vector<std::vector<std::string>>;
  CHECK(ResetCandidates(ResetKind::kReboot, {"ForceRestart", "GracefulRestart"}, "On").front() ==
        std::vector<std::string>{"GracefulRestart"});
  CHECK(ResetCandidates(ResetKind::kHardReboot, {"GracefulRestart", "PowerCycle"}, "On") ==
        V{{"PowerCycle"}});
  CHECK(ResetCandidates(ResetKind::kReboot, {"ForceOff", "On"}, "On") == V{{"ForceOff", "On"}});
  CHECK(ResetCandidates(ResetKind::kOn, {"On"}, "On") == V{{}});
  CHECK(ResetCandidates(ResetKind::kOff, {"PushPowerButton"}, "On") == V{{"PushPowerButton"}});
  CHECK(ResetCandidates(ResetKind::kReboot, {"Nmi"}, "On").empty());
  // HPE Cray EX's ActionInfo: ForceOff, On and its graceful Off. The graceful one first (it
  // was ForceOff for "off" and ForceOff+On for a reboot).
  CHECK(ResetCandidates(ResetKind::kOff, {"ForceOff", "On", "Off"}, "On") == V{{"Off"}, {"ForceOff"}});
  CHECK(ResetCandidates(ResetKind::kReboot, {"ForceOff", "On", "Off"}, "On").front() ==
        std::vector<std::string>{"Off", "On"});
  CHECK(ResetCandidates(ResetKind::kForceOff, {"ForceOff", "On", "Off"}, "On") == V{{"ForceOff"}});
  CHECK(ResetCandidates(ResetKind::kHardReboot, {"ForceOff", "On", "Off"}, "On") == V{{"ForceOff", "On"}});
  // "Off" is no standard value: never a guess where nothing is advertised.
  for (const auto& seq : ResetCandidates(ResetKind::kOff, {}, "On"))
    CHECK(std::find(seq.begin(), seq.end(), "Off") == seq.end());
  for (const auto& seq : ResetCandidates(ResetKind::kReboot, {}, "On"))
    CHECK(std::find(seq.begin(), seq.end(), "Off") == seq.end());
  CHECK(IsGracefulOff("Off"));
  CHECK(IsGracefulOff("GracefulShutdown"));
  CHECK_FALSE(IsGracefulOff("ForceOff"));
}

TEST_CASE("messages: ExtendedInfo everywhere, any casing, version-free keys") {
  nlohmann::json body = {
      {"error", {{"code", "iLO.0.10.ExtendedInfo"},
                 {"@Message.ExtendedInfo", {{{"MessageID", "iLO.2.14.SystemResetRequired"}}}}}},
      {"Attributes@Message.ExtendedInfo",
       {{{"MessageId", "Base.1.18.PropertyValueNotInList"}, {"Message", "bad value"},
         {"RelatedProperties", {"/Attributes/X"}}}}}};
  auto m = ExtractMessages(body);
  REQUIRE(m.size() == 2);
  CHECK(HasMessageKey(m, "SystemResetRequired"));
  CHECK(HasMessageKey(m, "PropertyValue", true));
  CHECK(MessageKey("Base.1.18.PropertyValueNotInList") == "Base.PropertyValueNotInList");
  CHECK(DescribeError(body).find("bad value [/Attributes/X]") != std::string::npos);
}

}  // namespace plumb::transport
