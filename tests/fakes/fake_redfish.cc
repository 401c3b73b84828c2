#include "fakes/fake_redfish.h"

#include <algorithm>

#include "modules/transport/url.h"

namespace plumb::testing {
namespace {

std::string Base64Decode(const std::string& in) {
  static const std::string t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -8;
  for (char c : in) {
    auto p = t.find(c);
    if (p == std::string::npos) break;
    val = (val << 6) + static_cast<int>(p);
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((val >> bits) & 0xFF));
      bits -= 8;
    }
  }
  return out;
}

void MergePatch(Json& target, const Json& patch) {
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (it.key().rfind("@Redfish.", 0) == 0) continue;
    if (it.value().is_object() && target.contains(it.key()) && target[it.key()].is_object()) {
      MergePatch(target[it.key()], it.value());
    } else {
      target[it.key()] = it.value();
    }
  }
}

}  // namespace

FakeRedfish::FakeRedfish(std::string o) : origin(std::move(o)) {
  resources["/redfish/v1/"] = {
      {"@odata.id", "/redfish/v1/"},
      {"RedfishVersion", "1.15.0"},
      {"Systems", {{"@odata.id", "/redfish/v1/Systems"}}},
      {"UpdateService", {{"@odata.id", "/redfish/v1/UpdateService"}}},
      {"SessionService", {{"@odata.id", "/redfish/v1/SessionService"}}},
      {"Links", {{"Sessions", {{"@odata.id", "/redfish/v1/SessionService/Sessions"}}}}}};
  resources["/redfish/v1/SessionService/Sessions"] = {
      {"@odata.id", "/redfish/v1/SessionService/Sessions"}, {"Members", Json::array()}};
}

std::string FakeRedfish::EtagOf(const std::string& path) const {
  auto it = versions.find(path);
  int v = it == versions.end() ? 0 : it->second;
  std::string tag = "\"" + std::to_string(1000 + v) + "\"";
  return weak_etags ? "W/" + tag : tag;
}

HttpResponse FakeRedfish::Reply(int status, const Json& body,
                                std::map<std::string, std::string> headers) {
  HttpResponse r;
  r.status = status;
  if (!body.is_null()) r.body = body.dump();
  r.headers = std::move(headers);
  return r;
}

HttpResponse FakeRedfish::Error(int status, const std::string& id, const std::string& text,
                                const std::string& severity) {
  return Reply(status, {{"error",
                         {{"code", "Base.1.18.GeneralError"},
                          {"message", "A general error has occurred."},
                          {"@Message.ExtendedInfo",
                           {{{"MessageId", id}, {"Message", text}, {"MessageSeverity", severity},
                             {"Resolution", "Resolve it."}}}}}}});
}

int FakeRedfish::Count(const std::string& method, const std::string& path) const {
  return static_cast<int>(std::count_if(log.begin(), log.end(), [&](const RecordedRequest& r) {
    return r.method == method && r.path == path;
  }));
}

void FakeRedfish::AddSystem(const std::vector<std::string>& allowable, const std::string& power,
                            const std::string& id) {
  const std::string link = "/redfish/v1/Systems/" + id;
  Json& coll = resources["/redfish/v1/Systems"];
  if (!coll.is_object()) coll = {{"@odata.id", "/redfish/v1/Systems"}, {"Members", Json::array()}};
  Json member = {{"@odata.id", link}};
  if (std::find(coll["Members"].begin(), coll["Members"].end(), member) == coll["Members"].end()) {
    coll["Members"].push_back(member);
  }
  Json action = {{"target", link + "/Actions/ComputerSystem.Reset"}};
  if (!allowable.empty()) action["ResetType@Redfish.AllowableValues"] = allowable;
  resources[link] = {{"@odata.id", link},
                     {"Id", id},
                     {"PowerState", power},
                     {"Model", "Fake 9000"},
                     {"Manufacturer", "Example"},
                     {"SerialNumber", "SN123"},
                     {"Status", {{"State", "Enabled"}, {"Health", "OK"}}},
                     {"Actions", {{"#ComputerSystem.Reset", action}}}};
  // Default reset behaviour: validate against the list, move PowerState at once.
  handlers[link + "/Actions/ComputerSystem.Reset"] =
      [this, allowable, link](const RecordedRequest& r) -> Result<HttpResponse> {
    Json b = Json::parse(r.body, nullptr, false);
    std::string t = b.is_object() ? b.value("ResetType", "") : "";
    if (!allowable.empty() && std::find(allowable.begin(), allowable.end(), t) == allowable.end()) {
      return Error(400, "Base.1.8.ActionParameterValueNotInList", "bad ResetType " + t);
    }
    Json& sys = resources[link];
    if (t == "ForceOff" || t == "GracefulShutdown" || t == "Off") sys["PowerState"] = "Off";
    if (t == "On" || t == "ForceOn") sys["PowerState"] = "On";
    return Reply(204);
  };
}

Result<HttpResponse> FakeRedfish::Send(const HttpRequest& req) {
  RecordedRequest rec;
  rec.method = req.method;
  rec.path = transport::PathOf(req.url);
  rec.body = req.body;
  for (const auto& p : req.parts) rec.body += "[part " + p.name + "]" + p.data;
  for (const auto& [k, v] : req.headers) {
    std::string lk = k;
    std::transform(lk.begin(), lk.end(), lk.begin(), ::tolower);
    rec.headers[lk] = v;
  }
  log.push_back(rec);
  if (transport::OriginOf(req.url).value() != origin) {
    return Diagnostic::Error("http.connect", "fake: wrong origin " + req.url);
  }

  auto key = rec.method + " " + rec.path;
  if (auto it = script.find(key); it != script.end() && !it->second.empty()) {
    auto r = std::move(it->second.front());
    it->second.pop_front();
    return r;
  }

  // Session login: no auth header expected.
  const std::string sessions = "/redfish/v1/SessionService/Sessions";
  if (rec.method == "POST" && rec.path == sessions && !handlers.count(rec.path)) {
    if (session_mode == SessionMode::kUnsupported) return Reply(405);
    if (!rec.Header("authorization").empty()) return Reply(415);
    Json b = Json::parse(rec.body, nullptr, false);
    if (!b.is_object() || b.value("UserName", "") != user || b.value("Password", "") != password) {
      return Error(401, "Base.1.8.NoValidSession", "bad credentials");
    }
    ++sessions_created;
    std::string token = "tok" + std::to_string(sessions_created);
    std::string id = std::to_string(sessions_created);
    std::string link = sessions + "/" + id;
    live_sessions.insert(token);
    resources[link] = {{"@odata.id", link}, {"Id", id}, {"UserName", user}};
    resources[sessions]["Members"].push_back({{"@odata.id", link}});
    std::map<std::string, std::string> h{{"x-auth-token", token}};
    if (session_mode == SessionMode::kNormal || session_mode == SessionMode::k204) {
      h["location"] = link;
    } else if (session_mode == SessionMode::kAbsoluteLocation) {
      h["location"] = "https://10.99.0.1:8443" + link;   // NAT: an address we must not use
    }
    return Reply(session_mode == SessionMode::k204 ? 204 : 201,
                 session_mode == SessionMode::k204 ? Json() : resources[link], h);
  }

  // Auth: everything but the service root needs a live token or valid Basic credentials.
  bool open = rec.path == "/redfish/v1/" || rec.path == "/redfish";
  bool authed = live_sessions.count(rec.Header("x-auth-token")) > 0;
  std::string basic = rec.Header("authorization");
  if (basic.rfind("Basic ", 0) == 0 && Base64Decode(basic.substr(6)) == user + ":" + password) {
    authed = true;
  }
  if (!open && !authed) return Error(401, "Base.1.8.NoValidSession", "no valid session");

  if (rec.method == "DELETE" && rec.path.rfind(sessions + "/", 0) == 0) {
    if (!resources.count(rec.path)) return Reply(404);
    live_sessions.erase(rec.Header("x-auth-token"));
    ++sessions_deleted;
    resources.erase(rec.path);
    auto& members = resources[sessions]["Members"];
    for (size_t i = 0; i < members.size(); ++i) {
      if (members[i]["@odata.id"] == rec.path) {
        members.erase(i);
        break;
      }
    }
    return Reply(204);
  }

  if (auto it = handlers.find(rec.path); it != handlers.end()) return it->second(rec);

  auto res = resources.find(rec.path);
  if (res == resources.end()) return Error(404, "Base.1.8.ResourceMissingAtURI", "no " + rec.path);
  if (rec.method == "GET") {
    Json body = res->second;
    body["@odata.etag"] = EtagOf(rec.path);
    std::map<std::string, std::string> h;
    if (!etag_in_body_only) h["etag"] = EtagOf(rec.path);
    return Reply(200, body, h);
  }
  if (rec.method == "PATCH") {
    std::string if_match = rec.Header("if-match");
    if (if_match.empty() && require_if_match) {
      return Error(428, "Base.1.8.PreconditionRequired", "If-Match required");
    }
    if (!if_match.empty() && if_match != "*" && if_match != EtagOf(rec.path)) {
      return Error(412, "Base.1.8.PreconditionFailed", "ETag mismatch");
    }
    Json b = Json::parse(rec.body, nullptr, false);
    if (!b.is_object()) return Error(400, "Base.1.8.MalformedJSON", "bad body");
    MergePatch(res->second, b);
    ++versions[rec.path];
    return Reply(204);
  }
  return Error(405, "Base.1.8.OperationNotAllowed", "method not allowed");
}

}  // namespace plumb::testing
