#pragma once
/// FakeRedfish: an in-memory Redfish service behind the HttpClient seam, for unit tests of the
/// Redfish client and the BMC modules. It models what the client must cope with: sessions
/// (201 + X-Auth-Token + Location, variants), Basic auth, 401 without credentials, ETags that
/// change on every write with If-Match checks (412 stale, 428 required), PATCH merging, and
/// scripted responses (`script`) for faults and vendor quirks. It records every request.
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/transport/http_client.h"

namespace plumb::testing {

using transport::HttpRequest;
using transport::HttpResponse;
using Json = nlohmann::json;

struct RecordedRequest {
  std::string method, path, body;
  std::map<std::string, std::string> headers;   // lower-case names
  std::string Header(const std::string& n) const {
    auto it = headers.find(n);
    return it == headers.end() ? "" : it->second;
  }
};

class FakeRedfish : public transport::HttpClient {
 public:
  /// A service root with Links.Sessions, Systems and UpdateService, at `origin`.
  explicit FakeRedfish(std::string origin = "https://bmc.example");

  Result<HttpResponse> Send(const HttpRequest& request) override;

  // ---- state ----
  std::string origin;
  std::map<std::string, Json> resources;   ///< path -> resource (served as-is, ETag added)
  std::map<std::string, int> versions;     ///< path -> write counter (the ETag)
  std::string user = "admin", password = "s3cret-PLANTED";
  std::set<std::string> live_sessions;     ///< tokens
  int sessions_created = 0, sessions_deleted = 0;
  std::vector<RecordedRequest> log;

  // ---- behaviour knobs ----
  enum class SessionMode { kNormal, kAbsoluteLocation, kNoLocation, k204, kUnsupported };
  SessionMode session_mode = SessionMode::kNormal;
  bool require_if_match = false;   ///< 428 on PATCH without If-Match (AMI, Lenovo)
  bool weak_etags = false;         ///< W/"n" like iLO
  bool etag_in_body_only = false;  ///< @odata.etag but no ETag header
  /// Handlers for POST to an action target (or any method on a path); run before defaults.
  std::map<std::string, std::function<Result<HttpResponse>(const RecordedRequest&)>> handlers;
  /// Scripted one-shot responses per "METHOD path", consumed in order before anything else.
  std::map<std::string, std::deque<Result<HttpResponse>>> script;

  // ---- helpers ----
  std::string EtagOf(const std::string& path) const;
  static HttpResponse Reply(int status, const Json& body = nullptr,
                            std::map<std::string, std::string> headers = {});
  static HttpResponse Error(int status, const std::string& message_id, const std::string& text,
                            const std::string& severity = "Critical");
  int Count(const std::string& method, const std::string& path) const;
  /// A plain system Systems/<id> with a Reset action advertising `allowable` inline (empty = no
  /// list), added to the Systems collection (a BMC may manage several: HPE Cray EX).
  void AddSystem(const std::vector<std::string>& allowable, const std::string& power = "On",
                 const std::string& id = "1");
};

}  // namespace plumb::testing
