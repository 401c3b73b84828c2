#include "modules/transport/redfish_client.h"

#include <doctest/doctest.h>

#include <stdexcept>

#include "fakes/fake_redfish.h"
#include "fakes/forward_http.h"

namespace plumb::transport {
namespace {

using testing::FakeRedfish;
using testing::ForwardHttp;

struct Rig {
  FakeRedfish fake;
  std::string system;   // RedfishOptions::system (set before Make)
  std::vector<std::string> notes;
  std::vector<std::chrono::milliseconds> sleeps;
  std::unique_ptr<RedfishClient> client;

  explicit Rig(BmcAuth auth = BmcAuth::kAuto) { fake.AddSystem({}); Make(auth); }
  void Make(BmcAuth auth = BmcAuth::kAuto) {
    RedfishOptions o;
    o.base_url = "https://bmc.example";
    o.credentials = {"admin", Secret("s3cret-PLANTED")};
    o.auth = auth;
    o.system = system;
    o.node = "gpu007";
    o.log = [this](const std::string& s) { notes.push_back(s); };
    o.sleep = [this](std::chrono::milliseconds d) { sleeps.push_back(d); };
    o.task_poll = std::chrono::milliseconds(100);
    o.power_poll = std::chrono::milliseconds(100);
    o.power_deadline = std::chrono::milliseconds(1000);
    o.graceful_deadline = std::chrono::milliseconds(2000);
    o.task_deadline = std::chrono::milliseconds(5000);
    client = std::make_unique<RedfishClient>(std::make_unique<ForwardHttp>(&fake), o);
  }
  void Close() { client.reset(); }
  std::string AllText() const {
    std::string s;
    for (const auto& n : notes) s += n + "\n";
    return s;
  }
};

Json Task(const std::string& id, const std::string& state) {
  return {{"@odata.id", "/redfish/v1/TaskService/Tasks/" + id}, {"Id", id}, {"TaskState", state},
          {"Messages", Json::array()}};
}

}  // namespace

TEST_CASE("redfish: session login sends no Authorization, uses X-Auth-Token, logs out on close") {
  Rig rig;
  auto sys = rig.client->Get("/redfish/v1/Systems/1");
  REQUIRE(sys.ok());
  CHECK(rig.client->AuthMode() == "session");
  CHECK(rig.fake.sessions_created == 1);
  const auto& login = rig.fake.log[1];
  CHECK(login.method == "POST");
  CHECK(login.Header("authorization").empty());
  CHECK(rig.fake.log.back().Header("x-auth-token") == "tok1");
  rig.Close();
  CHECK(rig.fake.sessions_deleted == 1);
  CHECK(rig.fake.live_sessions.empty());
  CHECK(rig.fake.log.back().method == "DELETE");
  CHECK(rig.fake.log.back().path == "/redfish/v1/SessionService/Sessions/1");
}

TEST_CASE("redfish: logout happens on error paths and when an exception unwinds") {
  SUBCASE("error") {
    Rig rig;
    auto r = rig.client->Get("/redfish/v1/NoSuchThing");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bmc.http.404");
    CHECK(r.error().message.find("ResourceMissingAtURI") != std::string::npos);
    rig.Close();
    CHECK(rig.fake.sessions_deleted == 1);
  }
  SUBCASE("exception") {
    FakeRedfish fake;
    fake.AddSystem({});
    try {
      RedfishOptions o;
      o.base_url = "https://bmc.example";
      o.credentials = {"admin", Secret("s3cret-PLANTED")};
      RedfishClient c(std::make_unique<ForwardHttp>(&fake), o);
      REQUIRE(c.Get("/redfish/v1/Systems/1").ok());
      throw std::runtime_error("module blew up");
    } catch (const std::runtime_error&) {
    }
    CHECK(fake.sessions_created == 1);
    CHECK(fake.sessions_deleted == 1);
  }
  SUBCASE("explicit logout then destructor: one DELETE") {
    Rig rig;
    REQUIRE(rig.client->Get("/redfish/v1/Systems/1").ok());
    CHECK(rig.client->Logout().ok());
    rig.Close();
    CHECK(rig.fake.Count("DELETE", "/redfish/v1/SessionService/Sessions/1") == 1);
  }
}

TEST_CASE("redfish: session variants") {
  SUBCASE("absolute Location with a NAT address: DELETE goes to our own host:port") {
    Rig rig;
    rig.fake.session_mode = FakeRedfish::SessionMode::kAbsoluteLocation;
    REQUIRE(rig.client->Get("/redfish/v1/Systems/1").ok());
    rig.Close();
    CHECK(rig.fake.sessions_deleted == 1);
  }
  SUBCASE("no Location: the body's @odata.id") {
    Rig rig;
    rig.fake.session_mode = FakeRedfish::SessionMode::kNoLocation;
    REQUIRE(rig.client->Get("/redfish/v1/Systems/1").ok());
    rig.Close();
    CHECK(rig.fake.sessions_deleted == 1);
  }
  SUBCASE("204 with no body (DMTF mockup server) is a success") {
    Rig rig;
    rig.fake.session_mode = FakeRedfish::SessionMode::k204;
    REQUIRE(rig.client->Get("/redfish/v1/Systems/1").ok());
    CHECK(rig.client->AuthMode() == "session");
    rig.Close();
    CHECK(rig.fake.sessions_deleted == 1);
  }
  SUBCASE("sessions unavailable: Basic fallback") {
    Rig rig;
    rig.fake.session_mode = FakeRedfish::SessionMode::kUnsupported;
    REQUIRE(rig.client->Get("/redfish/v1/Systems/1").ok());
    CHECK(rig.client->AuthMode() == "basic");
    CHECK(rig.fake.log.back().Header("authorization").rfind("Basic ", 0) == 0);
  }
  SUBCASE("no Links.Sessions in the service root: Basic") {
    Rig rig;
    rig.fake.resources["/redfish/v1/"].erase("Links");
    REQUIRE(rig.client->Get("/redfish/v1/Systems/1").ok());
    CHECK(rig.client->AuthMode() == "basic");
    CHECK(rig.fake.sessions_created == 0);
  }
  SUBCASE("session required but unavailable: an error") {
    Rig rig(BmcAuth::kSession);
    rig.fake.session_mode = FakeRedfish::SessionMode::kUnsupported;
    auto r = rig.client->Get("/redfish/v1/Systems/1");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bmc.auth");
  }
  SUBCASE("Basic configured: no session at all") {
    Rig rig(BmcAuth::kBasic);
    REQUIRE(rig.client->Get("/redfish/v1/Systems/1").ok());
    CHECK(rig.fake.sessions_created == 0);
  }
  SUBCASE("wrong password: bmc.auth, and the password is in no message") {
    Rig rig;
    rig.fake.password = "other";
    auto r = rig.client->Get("/redfish/v1/Systems/1");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bmc.auth");
    CHECK(r.error().ToString().find("s3cret-PLANTED") == std::string::npos);
    CHECK(rig.AllText().find("s3cret-PLANTED") == std::string::npos);
  }
}

TEST_CASE("redfish: an expired session (401) logs in again once and retries") {
  Rig rig;
  REQUIRE(rig.client->Get("/redfish/v1/Systems/1").ok());
  rig.fake.live_sessions.clear();   // the BMC expired it
  REQUIRE(rig.client->Get("/redfish/v1/Systems/1").ok());
  CHECK(rig.fake.sessions_created == 2);
  rig.Close();
  CHECK(rig.fake.Count("DELETE", "/redfish/v1/SessionService/Sessions/2") == 1);
}

TEST_CASE("redfish: pagination follows Members@odata.nextLink and guards loops") {
  Rig rig;
  auto& f = rig.fake;
  f.resources["/redfish/v1/C"] = {{"Members", {{{"@odata.id", "/redfish/v1/C/1"}}}},
                                  {"Members@odata.count", 3},
                                  {"Members@odata.nextLink", "/redfish/v1/C?$skip=1"}};
  f.resources["/redfish/v1/C?$skip=1"] = {
      {"Members", {{{"@odata.id", "/redfish/v1/C/2"}}, {{"@odata.id", "/redfish/v1/C/3"}}}},
      {"Members@odata.nextLink", "/redfish/v1/C?$skip=1"}};   // repeats itself: a loop
  for (int i = 1; i <= 3; ++i) {
    f.resources["/redfish/v1/C/" + std::to_string(i)] = {{"Id", std::to_string(i)}};
  }
  auto r = rig.client->GetCollection("/redfish/v1/C");
  REQUIRE(r.ok());
  REQUIRE(r.value().size() == 3);
  CHECK(r.value()[2]["Id"] == "3");
  CHECK(f.Count("GET", "/redfish/v1/C?$skip=1") == 1);
  CHECK(rig.AllText().find("repeats a nextLink") != std::string::npos);
}

TEST_CASE("redfish: $expand only where advertised - a refusal is remembered") {
  Rig rig;
  auto& f = rig.fake;
  f.resources["/redfish/v1/C"] = {{"Members", {{{"@odata.id", "/redfish/v1/C/1"}}}}};
  f.resources["/redfish/v1/C/1"] = {{"Id", "1"}};
  SUBCASE("not advertised") {
    REQUIRE(rig.client->GetCollection("/redfish/v1/C").ok());
    for (const auto& r : f.log) CHECK(r.path.find("$expand") == std::string::npos);
  }
  SUBCASE("advertised and served") {
    f.resources["/redfish/v1/"]["ProtocolFeaturesSupported"] = {{"ExpandQuery", {{"Levels", true}, {"MaxLevels", 1}}}};
    f.resources["/redfish/v1/C?$expand=.($levels=1)"] = {{"Members", {{{"@odata.id", "/redfish/v1/C/1"}, {"Id", "1"}, {"Name", "x"}}}}};
    auto r = rig.client->GetCollection("/redfish/v1/C");
    REQUIRE(r.ok());
    CHECK(r.value()[0]["Name"] == "x");
    CHECK(f.Count("GET", "/redfish/v1/C/1") == 0);
  }
  SUBCASE("advertised but refused with QueryNotSupported") {
    f.resources["/redfish/v1/"]["ProtocolFeaturesSupported"] = {{"ExpandQuery", {{"ExpandAll", true}}}};
    f.script["GET /redfish/v1/C?$expand=.($levels=1)"].push_back(
        FakeRedfish::Error(400, "Base.1.5.QueryNotSupportedOnResource", "no expand"));
    REQUIRE(rig.client->GetCollection("/redfish/v1/C").ok());
    REQUIRE(rig.client->GetCollection("/redfish/v1/C").ok());
    CHECK(f.Count("GET", "/redfish/v1/C?$expand=.($levels=1)") == 1);
    CHECK(f.Count("GET", "/redfish/v1/C") == 2);
  }
}

TEST_CASE("redfish: PATCH sends the resource's ETag verbatim as If-Match") {
  Rig rig;
  auto& f = rig.fake;
  f.weak_etags = true;
  f.resources["/redfish/v1/R"] = {{"A", 1}};
  auto r = rig.client->Patch("/redfish/v1/R", {{"A", 2}});
  REQUIRE(r.ok());
  CHECK(f.log.back().method == "PATCH");
  CHECK(f.log.back().Header("if-match") == "W/\"1000\"");
  CHECK(f.resources["/redfish/v1/R"]["A"] == 2);
  SUBCASE("ETag only in @odata.etag") {
    f.etag_in_body_only = true;
    REQUIRE(rig.client->Patch("/redfish/v1/R", {{"A", 3}}).ok());
    CHECK(f.log.back().Header("if-match") == "W/\"1001\"");
  }
}

TEST_CASE("redfish: 428 Precondition Required -> If-Match is added and the PATCH retried") {
  Rig rig;
  auto& f = rig.fake;
  f.require_if_match = true;
  // AMI Bios/SD: PATCH-only, GET is 404, so no ETag can be read: "*" is sent.
  f.handlers["/redfish/v1/Bios/SD"] = [&](const testing::RecordedRequest& r) -> Result<transport::HttpResponse> {
    if (r.method == "GET") return FakeRedfish::Error(404, "Base.1.8.ResourceMissingAtURI", "patch only");
    if (r.Header("if-match").empty()) return FakeRedfish::Error(428, "Base.1.8.PreconditionRequired", "need If-Match");
    return FakeRedfish::Reply(204);
  };
  auto r = rig.client->Patch("/redfish/v1/Bios/SD", {{"Attributes", {{"VMXEN", 1}}}});
  REQUIRE(r.ok());
  CHECK(f.Count("PATCH", "/redfish/v1/Bios/SD") == 2);
  CHECK(f.log.back().Header("if-match") == "*");
}

TEST_CASE("redfish: 412 -> re-read the ETag and retry exactly once") {
  Rig rig;
  auto& f = rig.fake;
  f.resources["/redfish/v1/R"] = {{"A", 1}};
  SUBCASE("spurious 412 (iDRAC) succeeds on retry") {
    f.script["PATCH /redfish/v1/R"].push_back(FakeRedfish::Error(412, "Base.1.8.PreconditionFailed", "stale"));
    REQUIRE(rig.client->Patch("/redfish/v1/R", {{"A", 2}}).ok());
    CHECK(f.Count("PATCH", "/redfish/v1/R") == 2);
    CHECK(f.Count("GET", "/redfish/v1/R") == 2);
  }
  SUBCASE("persistent 412 is an error with the ExtendedInfo message") {
    f.script["PATCH /redfish/v1/R"].push_back(FakeRedfish::Error(412, "Base.1.8.PreconditionFailed", "stale"));
    f.script["PATCH /redfish/v1/R"].push_back(FakeRedfish::Error(412, "Base.1.8.PreconditionFailed", "still stale"));
    auto r = rig.client->Patch("/redfish/v1/R", {{"A", 2}});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bmc.http.412");
    CHECK(r.error().message.find("still stale") != std::string::npos);
    CHECK(f.Count("PATCH", "/redfish/v1/R") == 2);
  }
}

TEST_CASE("redfish: 200 with an iLO SystemResetRequired error object is a success") {
  Rig rig;
  rig.fake.handlers["/redfish/v1/systems/1/bios/settings/"] = [](const testing::RecordedRequest& r) -> Result<transport::HttpResponse> {
    if (r.method == "GET") return FakeRedfish::Reply(200, {{"Attributes", Json::object()}});
    return FakeRedfish::Reply(200, {{"error", {{"code", "iLO.0.10.ExtendedInfo"},
        {"@Message.ExtendedInfo", {{{"MessageId", "iLO.2.14.SystemResetRequired"}}}}}}});
  };
  auto r = rig.client->Patch("/redfish/v1/systems/1/bios/settings/", {{"Attributes", {{"X", 1}}}});
  REQUIRE(r.ok());
  REQUIRE(r.value().messages.size() == 1);
  CHECK(r.value().messages[0] == "iLO.2.14.SystemResetRequired");
}

TEST_CASE("redfish: actions are POSTed without If-Match") {
  Rig rig;
  rig.fake.handlers["/redfish/v1/A"] = [](const testing::RecordedRequest& r) -> Result<transport::HttpResponse> {
    if (!r.Header("if-match").empty()) return FakeRedfish::Error(412, "Base.1.8.PreconditionFailed", "no If-Match on actions");
    return FakeRedfish::Reply(204);
  };
  auto r = rig.client->PostAction("/redfish/v1/A", {{"ImageURI", "https://fw.example/x.bin"}});
  REQUIRE(r.ok());
  CHECK_FALSE(r.value().had_task);
  CHECK(r.value().Succeeded());
}

TEST_CASE("redfish: task flows") {
  Rig rig;
  auto& f = rig.fake;
  const std::string mon = "/redfish/v1/TaskService/TaskMonitors/7";
  const std::string task = "/redfish/v1/TaskService/Tasks/7";
  SUBCASE("202 + Location monitor: 202 while running, then the final response") {
    f.handlers["/redfish/v1/A"] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
      return FakeRedfish::Reply(202, Task("7", "New"), {{"location", mon}, {"retry-after", "3"}});
    };
    f.script["GET " + mon].push_back(FakeRedfish::Reply(202, Task("7", "Running")));
    f.script["GET " + mon].push_back(FakeRedfish::Reply(202, Task("7", "Running")));
    f.script["GET " + mon].push_back(FakeRedfish::Reply(200, Task("7", "Completed")));
    auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
    REQUIRE(r.ok());
    CHECK(r.value().had_task);
    CHECK(r.value().state == "Completed");
    CHECK(r.value().task_link == task);
    CHECK(rig.sleeps.front() == std::chrono::seconds(3));   // Retry-After honoured
  }
  SUBCASE("task in the body, no Location (Supermicro): poll the Task") {
    f.handlers["/redfish/v1/A"] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
      return FakeRedfish::Reply(200, Task("7", "Running"));
    };
    f.script["GET " + task].push_back(FakeRedfish::Reply(200, Task("7", "Running")));
    Json done = Task("7", "Exception");
    done["TaskStatus"] = "Critical";
    done["Messages"] = {{{"MessageId", "Update.1.0.ApplyFailed"}, {"Message", "image rejected"}}};
    f.script["GET " + task].push_back(FakeRedfish::Reply(200, done));
    auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
    REQUIRE(r.ok());
    CHECK(r.value().state == "Exception");
    CHECK_FALSE(r.value().Succeeded());
    REQUIRE_FALSE(r.value().messages.empty());
    CHECK(r.value().messages.back() == "Update.1.0.ApplyFailed: image rejected");
  }
  SUBCASE("monitor and Task both gone before the end was read: unknown, never Completed") {
    f.handlers["/redfish/v1/A"] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
      return FakeRedfish::Reply(202, Task("7", "Running"), {{"location", mon}});
    };
    auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
    REQUIRE(r.ok());
    CHECK(f.Count("GET", task) == 1);   // the monitor's 404 sent it to the Task (Dell)
    CHECK_FALSE(r.value().Known());
    CHECK_FALSE(r.value().Succeeded());
    CHECK_FALSE(r.value().Failed());
    CHECK(r.value().unknown.find("HTTP 404") != std::string::npos);
  }
  SUBCASE("monitor gone but the Task remains: its state decides") {
    f.handlers["/redfish/v1/A"] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
      return FakeRedfish::Reply(202, Task("7", "Running"), {{"location", mon}});
    };
    f.resources[task] = Task("7", "Killed");
    auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
    REQUIRE(r.ok());
    CHECK(r.value().state == "Killed");
  }
  SUBCASE("the BMC drops off while updating itself: polling survives transport errors") {
    f.handlers["/redfish/v1/A"] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
      return FakeRedfish::Reply(202, Json(), {{"location", mon}});
    };
    for (int i = 0; i < 3; ++i) f.script["GET " + mon].push_back(Diagnostic::Error("http.connect", "refused"));
    f.script["GET " + mon].push_back(FakeRedfish::Reply(200, Task("7", "Completed")));
    auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
    REQUIRE(r.ok());
    CHECK(r.value().state == "Completed");
  }
  SUBCASE("PercentComplete 100 does not end a Running task") {
    f.handlers["/redfish/v1/A"] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
      return FakeRedfish::Reply(202, Json(), {{"location", mon}});
    };
    Json t = Task("7", "Running");
    t["PercentComplete"] = 100;
    f.script["GET " + mon].push_back(FakeRedfish::Reply(200, t));
    f.script["GET " + mon].push_back(FakeRedfish::Reply(200, Task("7", "Completed")));
    auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
    REQUIRE(r.ok());
    CHECK(f.Count("GET", mon) == 2);
  }
  SUBCASE("a task that never ends times out") {
    f.handlers["/redfish/v1/A"] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
      return FakeRedfish::Reply(202, Json(), {{"location", mon}});
    };
    f.handlers[mon] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
      return FakeRedfish::Reply(202, Task("7", "Running"));
    };
    auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bmc.task.timeout");
    // What it waited for, how long, and where it stood.
    CHECK(r.error().message.find("task " + task) != std::string::npos);
    CHECK(r.error().message.find("after 5s") != std::string::npos);
    CHECK(r.error().message.find("Running") != std::string::npos);
    CHECK(r.error().hint.find("--task-timeout") != std::string::npos);
  }
}

TEST_CASE("redfish: a task monitor's 5xx is not the task's end: polled again, the HTTP status said") {
  Rig rig;
  auto& f = rig.fake;
  const std::string mon = "/redfish/v1/TaskService/TaskMonitors/7";
  f.handlers["/redfish/v1/A"] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
    return FakeRedfish::Reply(202, Task("7", "Running"), {{"location", mon}});
  };
  SUBCASE("one 500 on the first poll, then the task completes") {
    f.script["GET " + mon].push_back(FakeRedfish::Error(500, "Base.1.8.GeneralError", "internal error"));
    f.script["GET " + mon].push_back(FakeRedfish::Reply(200, Task("7", "Completed")));
    auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
    REQUIRE(r.ok());
    CHECK(r.value().state == "Completed");
    CHECK(r.value().Succeeded());
    CHECK(r.value().http_status == 200);
    CHECK(rig.AllText().find("HTTP 500") != std::string::npos);
  }
  SUBCASE("5xx past the budget: the end is unknown, naming the status") {
    f.handlers[mon] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
      return FakeRedfish::Error(502, "Base.1.8.GeneralError", "bad gateway");
    };
    auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().Known());
    CHECK(r.value().http_status == 502);
    CHECK(r.value().unknown.find("HTTP 502") != std::string::npos);
    CHECK(r.value().EndText().find("unknown") != std::string::npos);
  }
  SUBCASE("a 4xx final response is the task's failed end, with its HTTP status") {
    f.script["GET " + mon].push_back(FakeRedfish::Error(400, "Base.1.8.ActionParameterUnknown", "no"));
    auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
    REQUIRE(r.ok());
    CHECK(r.value().Failed());
    CHECK(r.value().EndText().find("HTTP 400") != std::string::npos);
  }
}

TEST_CASE("redfish: a task answer cut short is not success") {
  Rig rig;
  auto& f = rig.fake;
  const std::string mon = "/redfish/v1/TaskService/TaskMonitors/7";
  const std::string task = "/redfish/v1/TaskService/Tasks/7";
  std::string done = Task("7", "Exception").dump();
  HttpResponse cut;
  cut.status = 200;
  cut.body = done.substr(0, done.size() / 2);
  SUBCASE("the monitor's last answer is cut: the Task itself is read") {
    f.handlers["/redfish/v1/A"] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
      return FakeRedfish::Reply(202, Task("7", "Running"), {{"location", mon}});
    };
    f.script["GET " + mon].push_back(cut);
    f.resources[task] = Task("7", "Exception");
    auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
    REQUIRE(r.ok());
    CHECK(r.value().state == "Exception");
    CHECK(r.value().Failed());
  }
  SUBCASE("nothing readable: the end is unknown") {
    f.handlers["/redfish/v1/A"] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
      return FakeRedfish::Reply(202, Json(), {{"location", mon}});
    };
    f.handlers[mon] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> { return cut; };
    auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().Known());
    CHECK_FALSE(r.value().Succeeded());
    CHECK(r.value().unknown.find("not JSON") != std::string::npos);
  }
  SUBCASE("202 without a monitor or a task: unknown, not done") {
    f.handlers["/redfish/v1/A"] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
      return FakeRedfish::Reply(202);
    };
    auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().Known());
  }
}

TEST_CASE("redfish: Completed with TaskStatus Critical is a failed end") {
  Rig rig;
  Json t = Task("7", "Completed");
  t["TaskStatus"] = "Critical";
  rig.fake.handlers["/redfish/v1/A"] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
    return FakeRedfish::Reply(200, t);
  };
  auto r = rig.client->PostAction("/redfish/v1/A", Json::object());
  REQUIRE(r.ok());
  CHECK(r.value().state == "Completed");
  CHECK(r.value().Failed());
  CHECK(r.value().EndText().find("TaskStatus Critical") != std::string::npos);
}

TEST_CASE("redfish: task waits report progress, say what they accepted, and end on the cancel signal") {
  CancelSignal cancel;
  Rig rig;
  std::vector<WaitProgress> seen;
  int polls = 0;   // outlives the block: the client's sleep hook counts into it
  {
    RedfishOptions o;   // Rig's, plus the signal and a progress sink
    o.base_url = "https://bmc.example";
    o.credentials = {"admin", Secret("s3cret-PLANTED")};
    o.node = "gpu007";
    o.task_poll = std::chrono::milliseconds(100);
    o.task_deadline = std::chrono::minutes(45);
    o.cancel = &cancel;
    o.progress = [&](const WaitProgress& p) { seen.push_back(p); };
    // The third pause is where the operator presses Ctrl-C.
    o.sleep = [&](std::chrono::milliseconds) {
      if (++polls == 3) cancel.Set();
    };
    rig.client = std::make_unique<RedfishClient>(std::make_unique<ForwardHttp>(&rig.fake), o);
  }
  const std::string mon = "/redfish/v1/TaskService/TaskMonitors/7";
  const std::string task = "/redfish/v1/TaskService/Tasks/7";
  rig.fake.handlers["/redfish/v1/A"] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
    return FakeRedfish::Reply(202, Task("7", "New"), {{"location", mon}});
  };
  Json running = Task("7", "Running");
  running["PercentComplete"] = 42;
  rig.fake.handlers[mon] = [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> {
    return FakeRedfish::Reply(202, running);
  };
  std::string accepted;
  TaskWatch watch;
  watch.accepted = [&](const std::string& t, const std::string& m) {
    accepted = t + " " + m;
    CHECK(rig.fake.Count("GET", mon) == 0);   // said before any wait
  };
  std::vector<std::string> mine;
  watch.progress = [&](const WaitProgress& p) { mine.push_back(p.Text()); };
  auto r = rig.client->PostAction("/redfish/v1/A", Json::object(), watch);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == kCancelledCode);
  CHECK(r.error().message.find(task) != std::string::npos);
  CHECK(r.error().message.find("carries on") != std::string::npos);
  CHECK(accepted == task + " " + mon);
  CHECK(rig.fake.Count("GET", mon) == 2);   // no poll after the signal
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].node == "gpu007");
  CHECK(seen[0].percent == 42);
  CHECK(seen[0].limit == std::chrono::minutes(45));
  REQUIRE(mine.size() == 2);
  CHECK(mine[1].find("task " + task + ": Running 42% (") != std::string::npos);
  CHECK(mine[1].find(" of 45m)") != std::string::npos);
}

TEST_CASE("redfish: FollowTaskLink picks up a task started earlier") {
  Rig rig;
  const std::string mon = "/redfish/v1/TaskService/TaskMonitors/7";
  const std::string task = "/redfish/v1/TaskService/Tasks/7";
  SUBCASE("the monitor is gone: the Task tells the end") {
    Json done = Task("7", "Completed");
    done["Messages"] = {{{"MessageId", "Update.1.0.UpdateSuccessful"}, {"Message", "ok"}}};
    rig.fake.resources[task] = done;
    auto r = rig.client->FollowTaskLink(task, mon);
    REQUIRE(r.ok());
    CHECK(r.value().state == "Completed");
    CHECK(r.value().message_ids == std::vector<std::string>{"Update.1.0.UpdateSuccessful"});
    CHECK(rig.fake.Count("POST", "/redfish/v1/A") == 0);
  }
  SUBCASE("both gone: unknown") {
    auto r = rig.client->FollowTaskLink(task, mon);
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().Known());
  }
}

TEST_CASE("redfish: a reset's power wait ends on the cancel signal and reports progress") {
  CancelSignal cancel;
  Rig rig;
  rig.fake.AddSystem({"On"}, "Off", "1");
  std::vector<WaitProgress> seen;
  RedfishOptions o;
  o.base_url = "https://bmc.example";
  o.credentials = {"admin", Secret("s3cret-PLANTED")};
  o.power_poll = std::chrono::milliseconds(100);
  o.cancel = &cancel;
  o.progress = [&](const WaitProgress& p) { seen.push_back(p); };
  o.sleep = [&](std::chrono::milliseconds) { cancel.Set(); };
  rig.client = std::make_unique<RedfishClient>(std::make_unique<ForwardHttp>(&rig.fake), o);
  // The system stays Off whatever is asked (a reset that never lands).
  rig.fake.handlers["/redfish/v1/Systems/1/Actions/ComputerSystem.Reset"] =
      [&](const testing::RecordedRequest&) -> Result<transport::HttpResponse> { return FakeRedfish::Reply(204); };
  auto r = rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kOn);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == kCancelledCode);
  CHECK(r.error().message.find("PowerState On") != std::string::npos);
  REQUIRE_FALSE(seen.empty());
  CHECK(seen[0].kind == WaitProgress::Kind::kPower);
  CHECK(seen[0].state == "Off");
}

TEST_CASE("redfish: reset chooses an advertised ResetType with fallbacks") {
  SUBCASE("GracefulRestart when listed") {
    FakeRedfish f;
    Rig rig;
    rig.fake.AddSystem({"On", "ForceOff", "GracefulRestart", "ForceRestart"});
    auto r = rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kReboot);
    REQUIRE(r.ok());
    CHECK(r.value() == "GracefulRestart");
  }
  SUBCASE("iDRAC9: no GracefulRestart -> ForceRestart") {
    Rig rig;
    rig.fake.AddSystem({"On", "ForceOff", "ForceRestart", "GracefulShutdown", "PushPowerButton", "Nmi"});
    auto r = rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kReboot);
    REQUIRE(r.ok());
    CHECK(r.value() == "ForceRestart");
    CHECK(rig.fake.log.back().path == "/redfish/v1/Systems/1");
  }
  SUBCASE("only off/on: GracefulShutdown, wait for Off, then On") {
    Rig rig;
    rig.fake.AddSystem({"On", "GracefulShutdown"});
    auto r = rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kReboot);
    REQUIRE(r.ok());
    CHECK(r.value() == "GracefulShutdown+On");
    CHECK(rig.fake.resources["/redfish/v1/Systems/1"]["PowerState"] == "On");
  }
  SUBCASE("ActionInfo (bmcweb) instead of inline values") {
    Rig rig;
    rig.fake.AddSystem({"ForceOff", "On", "PowerCycle"});
    auto& a = rig.fake.resources["/redfish/v1/Systems/1"]["Actions"]["#ComputerSystem.Reset"];
    a.erase("ResetType@Redfish.AllowableValues");
    a["@Redfish.ActionInfo"] = "/redfish/v1/Systems/1/ResetActionInfo";
    rig.fake.resources["/redfish/v1/Systems/1/ResetActionInfo"] = {
        {"Parameters", {{{"Name", "ResetType"}, {"AllowableValues", {"ForceOff", "On", "PowerCycle"}}}}}};
    auto r = rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kReboot);
    REQUIRE(r.ok());
    CHECK(r.value() == "PowerCycle");
  }
  SUBCASE("no list advertised: a 400 moves on to the next guess") {
    Rig rig;
    rig.fake.script["POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset"].push_back(
        FakeRedfish::Error(400, "Base.1.8.ActionParameterValueNotInList", "no GracefulRestart"));
    auto r = rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kReboot);
    REQUIRE(r.ok());
    CHECK(r.value() == "ForceRestart");
  }
  SUBCASE("reboot of a node that is off powers it on") {
    Rig rig;
    rig.fake.AddSystem({"On", "ForceOff", "ForceRestart"}, "Off");
    auto r = rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kReboot);
    REQUIRE(r.ok());
    CHECK(r.value() == "On");
  }
  SUBCASE("nothing usable: a clear error listing what is there") {
    Rig rig;
    rig.fake.AddSystem({"Nmi"});
    auto r = rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kReboot);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bmc.reset.unsupported");
    CHECK(r.error().message.find("Nmi") != std::string::npos);
  }
}

TEST_CASE("redfish: reset prefers the graceful off the BMC offers, forcing only after a timeout") {
  // HPE Cray EX: ResetType only through ActionInfo, which lists ForceOff, On and Off.
  auto cray = [](Rig& rig) {
    rig.fake.AddSystem({"ForceOff", "On", "Off"});
    auto& a = rig.fake.resources["/redfish/v1/Systems/1"]["Actions"]["#ComputerSystem.Reset"];
    a.erase("ResetType@Redfish.AllowableValues");
    a["@Redfish.ActionInfo"] = "/redfish/v1/Systems/1/ResetActionInfo";
    rig.fake.resources["/redfish/v1/Systems/1/ResetActionInfo"] = {
        {"Parameters", {{{"Name", "ResetType"}, {"Required", true}, {"AllowableValues", {"ForceOff", "On", "Off"}}}}}};
  };
  auto sent = [](const Rig& rig) {
    std::vector<std::string> types;
    for (const auto& q : rig.fake.log)
      if (q.method == "POST" && q.path == "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset")
        types.push_back(Json::parse(q.body)["ResetType"].get<std::string>());
    return types;
  };
  SUBCASE("off: the graceful Off, not ForceOff") {
    Rig rig;
    cray(rig);
    auto r = rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kOff);
    REQUIRE(r.ok());
    CHECK(r.value() == "Off");
    CHECK(sent(rig) == std::vector<std::string>{"Off"});
    CHECK(rig.fake.resources["/redfish/v1/Systems/1"]["PowerState"] == "Off");
  }
  SUBCASE("reboot: Off, wait for it, then On") {
    Rig rig;
    cray(rig);
    auto r = rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kReboot);
    REQUIRE(r.ok());
    CHECK(r.value() == "Off+On");
    CHECK(sent(rig) == std::vector<std::string>{"Off", "On"});
  }
  SUBCASE("force-off and hard-reboot still force") {
    Rig rig;
    cray(rig);
    CHECK(rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kForceOff).value() == "ForceOff");
    CHECK(rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kHardReboot).value() == "On");
  }
  SUBCASE("an OS that does not shut down: ForceOff after the graceful deadline, and said") {
    Rig rig;
    cray(rig);
    auto& handler = rig.fake.handlers["/redfish/v1/Systems/1/Actions/ComputerSystem.Reset"];
    auto normal = handler;
    handler = [&rig, normal](const testing::RecordedRequest& q) -> Result<HttpResponse> {
      if (Json::parse(q.body)["ResetType"] == "Off") return FakeRedfish::Reply(204);   // ignored
      return normal(q);
    };
    auto r = rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kReboot);
    REQUIRE(r.ok());
    CHECK(r.value() == "Off+ForceOff+On (Off had not powered it off after 2 s)");
    CHECK(sent(rig) == std::vector<std::string>{"Off", "ForceOff", "On"});
    // It waited the graceful deadline (2 s of 100 ms polls) before forcing, not less.
    std::chrono::milliseconds waited{0};
    for (auto d : rig.sleeps) waited += d;
    CHECK(waited >= std::chrono::milliseconds(2000));
    CHECK(rig.AllText().find("sending ForceOff") != std::string::npos);
  }
  SUBCASE("a graceful off that neither powers off nor may be forced is an error, not success") {
    Rig rig;
    rig.fake.AddSystem({"GracefulShutdown", "On"});
    rig.fake.handlers["/redfish/v1/Systems/1/Actions/ComputerSystem.Reset"] =
        [](const testing::RecordedRequest&) -> Result<HttpResponse> { return FakeRedfish::Reply(204); };
    auto r = rig.client->Reset("/redfish/v1/Systems/1", ResetKind::kOff);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bmc.reset.timeout");
  }
}

TEST_CASE("redfish: redirects are followed for GET and POST on our own host:port") {
  Rig rig;
  auto& f = rig.fake;
  SUBCASE("GET 301 to the trailing-slash form") {
    f.script["GET /redfish/v1/Systems/1"].push_back(FakeRedfish::Reply(301, Json(), {{"location", "/redfish/v1/systems/1/"}}));
    f.resources["/redfish/v1/systems/1/"] = {{"Id", "1"}, {"Name", "lower"}};
    auto r = rig.client->Get("/redfish/v1/Systems/1");
    REQUIRE(r.ok());
    CHECK(r.value()["Name"] == "lower");
  }
  SUBCASE("session POST 308 (Supermicro adds a slash) stays a POST with its body") {
    f.script["POST /redfish/v1/SessionService/Sessions"].push_back(
        FakeRedfish::Reply(308, Json(), {{"location", "https://BMC.example:443/redfish/v1/SessionService/Sessions/"}}));
    f.live_sessions.insert("tokR");
    f.resources["/redfish/v1/SessionService/Sessions/9"] = {{"Id", "9"}};
    f.script["POST /redfish/v1/SessionService/Sessions/"].push_back(
        FakeRedfish::Reply(201, Json(), {{"x-auth-token", "tokR"}, {"location", "Sessions/9"}}));
    REQUIRE(rig.client->Get("/redfish/v1/Systems/1").ok());
    rig.Close();
    const auto& post = f.log[f.log.size() - 3];   // login, redirected login, GET, DELETE
    CHECK(post.method == "POST");
    CHECK(post.path == "/redfish/v1/SessionService/Sessions/");
    CHECK(post.body.find("UserName") != std::string::npos);
    // The relative Location resolved against the redirected URL (RFC 3986), on our origin.
    CHECK(f.Count("DELETE", "/redfish/v1/SessionService/Sessions/9") == 1);
  }
  SUBCASE("a redirect to another host is refused, saying where, and nothing is read there") {
    f.script["GET /redfish/v1/Systems/1"].push_back(
        FakeRedfish::Reply(302, Json(), {{"location", "https://10.1.2.3/redfish/v1/Systems/1"}}));
    const size_t before = f.log.size();
    auto r = rig.client->Get("/redfish/v1/Systems/1");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bmc.redirect.cross-host");
    CHECK(r.error().message.find("https://10.1.2.3:443") != std::string::npos);
    CHECK(r.error().hint.find("bmc:") != std::string::npos);
    // One GET (the one redirected): the path was not read again on our host.
    int gets = 0;
    for (size_t i = before; i < f.log.size(); ++i) gets += f.log[i].path == "/redfish/v1/Systems/1";
    CHECK(gets == 1);
  }
  SUBCASE("a POST redirected to another host is not re-sent") {
    f.script["POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset"].push_back(
        FakeRedfish::Reply(307, Json(), {{"location", "https://other.example/redfish/v1/Systems/1/Actions/ComputerSystem.Reset"}}));
    auto r = rig.client->PostAction("/redfish/v1/Systems/1/Actions/ComputerSystem.Reset", {{"ResetType", "On"}});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bmc.redirect.cross-host");
    CHECK(f.Count("POST", "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset") == 1);
  }
  SUBCASE("redirect loop is cut off") {
    for (int i = 0; i < 10; ++i) {
      f.script["GET /redfish/v1/Systems/1"].push_back(FakeRedfish::Reply(302, Json(), {{"location", "/redfish/v1/Systems/1"}}));
    }
    auto r = rig.client->Get("/redfish/v1/Systems/1");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bmc.redirect");
  }
}

TEST_CASE("redfish: a BMC's error text that quotes the password or token is scrubbed") {
  Rig rig;
  auto& f = rig.fake;
  SUBCASE("failed login quoting the password") {
    f.script["POST /redfish/v1/SessionService/Sessions"].push_back(FakeRedfish::Error(
        400, "Base.1.8.PropertyValueFormatError",
        "The value 's3cret-PLANTED' for the property Password is of a different format."));
    auto r = rig.client->Get("/redfish/v1/Systems/1");
    REQUIRE_FALSE(r.ok());
    const std::string all = r.error().ToString() + r.error().hint + rig.AllText();
    CHECK(all.find("s3cret-PLANTED") == std::string::npos);
    CHECK(r.error().message.find("<redacted>") != std::string::npos);
    CHECK(r.error().message.find("PropertyValueFormatError") != std::string::npos);
  }
}

TEST_CASE("redfish: 503 with Retry-After is retried with a capped wait") {
  Rig rig;
  auto& f = rig.fake;
  SUBCASE("transient") {
    f.script["GET /redfish/v1/Systems/1"].push_back(FakeRedfish::Reply(503, Json(), {{"retry-after", "2"}}));
    f.script["GET /redfish/v1/Systems/1"].push_back(FakeRedfish::Reply(503, Json(), {{"retry-after", "999"}}));
    REQUIRE(rig.client->Get("/redfish/v1/Systems/1").ok());
    REQUIRE(rig.sleeps.size() == 2);
    CHECK(rig.sleeps[0] == std::chrono::seconds(2));
    CHECK(rig.sleeps[1] == std::chrono::seconds(10));   // capped
  }
  SUBCASE("session limit reached: the error carries the BMC's message") {
    for (int i = 0; i < 4; ++i) {
      f.script["POST /redfish/v1/SessionService/Sessions"].push_back(
          FakeRedfish::Error(503, "IDRAC.2.8.RAC0218", "The maximum number of user sessions is reached."));
    }
    auto r = rig.client->Get("/redfish/v1/Systems/1");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bmc.http.503");
    CHECK(r.error().message.find("RAC0218") != std::string::npos);
    CHECK(r.error().hint == "Resolve it.");
    // The failed login is remembered: later requests do not hammer the BMC with logins.
    CHECK_FALSE(rig.client->Get("/redfish/v1/Systems/1").ok());
    CHECK(rig.fake.Count("POST", "/redfish/v1/SessionService/Sessions") == 4);
  }
}

TEST_CASE("redfish: timeouts are retried for GET, not for PATCH") {
  Rig rig;
  auto& f = rig.fake;
  f.resources["/redfish/v1/R"] = {{"A", 1}};
  f.script["GET /redfish/v1/R"].push_back(Diagnostic::Error("http.timeout", "slow"));
  REQUIRE(rig.client->Get("/redfish/v1/R").ok());
  CHECK(f.Count("GET", "/redfish/v1/R") == 2);
  f.script["PATCH /redfish/v1/R"].push_back(Diagnostic::Error("http.timeout", "slow"));
  auto p = rig.client->Patch("/redfish/v1/R", {{"A", 2}});
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().code == "http.timeout");
  CHECK(f.Count("PATCH", "/redfish/v1/R") == 1);
}

TEST_CASE("redfish: links are used verbatim (iLO lower case, trailing slash)") {
  Rig rig;
  rig.fake.resources["/redfish/v1/systems/1/bios/"] = {{"Id", "bios"}};
  REQUIRE(rig.client->Get("/redfish/v1/systems/1/bios/").ok());
  CHECK(rig.fake.log.back().path == "/redfish/v1/systems/1/bios/");
}

TEST_CASE("redfish: SystemLink comes from the service root's Systems collection") {
  Rig rig;
  auto r = rig.client->SystemLink();
  REQUIRE(r.ok());
  CHECK(r.value() == "/redfish/v1/Systems/1");
}

TEST_CASE("redfish: on a BMC with several systems, the node's own system is the one it names") {
  // HPE Cray EX: one BMC, Systems/Node0 and Systems/Node1. Members[0] used to be taken for
  // every node, so Node1 could never be reached.
  Rig rig;
  rig.fake.resources.erase("/redfish/v1/Systems");
  rig.fake.AddSystem({"On", "ForceOff"}, "On", "Node0");
  rig.fake.AddSystem({"On", "ForceOff"}, "Off", "Node1");
  SUBCASE("named") {
    rig.system = "Node1";
    rig.Make();
    auto r = rig.client->SystemLink();
    REQUIRE(r.ok());
    CHECK(r.value() == "/redfish/v1/Systems/Node1");
    auto reset = rig.client->Reset(r.value(), ResetKind::kOn);
    REQUIRE(reset.ok());
    CHECK(rig.fake.resources["/redfish/v1/Systems/Node1"]["PowerState"] == "On");
    CHECK(rig.fake.Count("POST", "/redfish/v1/Systems/Node0/Actions/ComputerSystem.Reset") == 0);
  }
  SUBCASE("not named: a clear error naming the node and listing the systems") {
    rig.Make();
    auto r = rig.client->SystemLink();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bmc.system.ambiguous");
    CHECK(r.error().message.find("node gpu007") != std::string::npos);
    CHECK(r.error().message.find("2 systems (Node0, Node1)") != std::string::npos);
    CHECK(r.error().hint.find("bmc_system: Node0") != std::string::npos);
  }
  SUBCASE("named wrong") {
    rig.system = "Node7";
    rig.Make();
    auto r = rig.client->SystemLink();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bmc.system.unknown");
    CHECK(r.error().message.find("has no system 'Node7' (it has Node0, Node1)") != std::string::npos);
  }
}

TEST_CASE("redfish: a Resolution of \"None.\" is no hint, and a message is said once") {
  Rig rig;
  auto& f = rig.fake;
  f.resources["/redfish/v1/R"] = {{"A", 1}};
  Json info = {{"MessageId", "Base.1.18.PropertyValueNotInList"},
               {"Message", "The value 'x' for the property A is not in the list of acceptable values."},
               {"Resolution", "None."}};
  f.script["PATCH /redfish/v1/R"].push_back(FakeRedfish::Reply(
      400, {{"error", {{"code", "Base.1.18.PropertyValueNotInList"},
                       {"message", info["Message"]},
                       {"@Message.ExtendedInfo", {info}}}}}));
  auto r = rig.client->Patch("/redfish/v1/R", {{"A", "x"}});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().hint.empty());
  const std::string text = info["Message"].get<std::string>();
  const std::string& m = r.error().message;
  REQUIRE(m.find(text) != std::string::npos);
  CHECK(m.find(text) == m.rfind(text));   // once
  CHECK(m.find("Base.1.18.PropertyValueNotInList: " + text) != std::string::npos);
  SUBCASE("a real Resolution still is the hint") {
    info["Resolution"] = "Remove the property.";
    f.script["PATCH /redfish/v1/R"].push_back(FakeRedfish::Reply(400, {{"error", {{"@Message.ExtendedInfo", {info}}}}}));
    auto r2 = rig.client->Patch("/redfish/v1/R", {{"A", "x"}});
    REQUIRE_FALSE(r2.ok());
    CHECK(r2.error().hint == "Remove the property.");
  }
}

}  // namespace plumb::transport
