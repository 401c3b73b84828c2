#include "modules/transport/redfish_client.h"

#include <algorithm>
#include <set>
#include <thread>

#include "modules/transport/action_info.h"
#include "modules/transport/redfish_messages.h"
#include "modules/transport/reset_plan.h"
#include "modules/transport/system_select.h"
#include "modules/transport/url.h"

namespace plumb::transport {
namespace {

constexpr const char* kServiceRoot = "/redfish/v1/";
constexpr int kMaxRedirects = 5;
constexpr int kMaxPages = 10000;
// Task answers in a row whose body is not JSON before the task's end counts as unknown.
constexpr int kUnreadableBudget = 3;

std::string Base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
  }
  if (i + 1 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16;
    out += {t[v >> 18], t[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
  }
  return out;
}

Json ParseBody(const std::string& body) {
  if (body.empty()) return nullptr;
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? Json() : j;
}

bool Is2xx(int s) { return s >= 200 && s < 300; }

std::string LinkOf(const Json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_object()) {
    return j[key].value("@odata.id", "");
  }
  return {};
}

bool IsTask(const Json& j) { return j.is_object() && j.contains("TaskState"); }

bool Terminal(const std::string& state) {
  return state == "Completed" || state == "Killed" || state == "Exception" ||
         state == "Cancelled";
}

std::chrono::milliseconds RetryAfter(const HttpResponse& r, std::chrono::milliseconds fallback,
                                     std::chrono::milliseconds cap) {
  std::string v = r.Header("retry-after");
  if (!v.empty() && std::all_of(v.begin(), v.end(), ::isdigit) && v.size() < 7) {
    return std::min(cap, std::chrono::milliseconds(std::stol(v) * 1000));
  }
  return std::min(cap, fallback);
}

// Adds a message to the outcome once: a task polled many times repeats its Messages.
void AddMessage(TaskOutcome& out, const std::string& id, const std::string& text) {
  std::string s = id;
  if (!text.empty()) s += (s.empty() ? "" : ": ") + text;
  if (!s.empty() && std::find(out.messages.begin(), out.messages.end(), s) == out.messages.end()) {
    out.messages.push_back(s);
  }
  if (!id.empty() && std::find(out.message_ids.begin(), out.message_ids.end(), id) ==
                         out.message_ids.end()) {
    out.message_ids.push_back(id);
  }
}

void TaskMessages(const Json& task, TaskOutcome& out) {
  if (!task.is_object() || !task.contains("Messages") || !task["Messages"].is_array()) return;
  for (const auto& m : task["Messages"]) {
    if (!m.is_object()) continue;
    AddMessage(out, m.value("MessageId", ""), m.value("Message", ""));
  }
}

void BodyMessages(const Json& body, TaskOutcome& out) {
  for (const auto& m : ExtractMessages(body)) AddMessage(out, m.id, m.message);
}

}  // namespace

struct RedfishClient::Exchange {
  std::string method = "GET";
  std::string link;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<MultipartPart> parts;
  bool auth = true;
};

RedfishClient::RedfishClient(std::unique_ptr<HttpClient> http, RedfishOptions options)
    : http_(std::move(http)), options_(std::move(options)) {
  auto origin = OriginOf(options_.base_url);
  if (origin.ok()) {
    origin_ = origin.value();
  } else {
    origin_error_ = origin.error().message;
  }
}

RedfishClient::~RedfishClient() {
  // Never leak a session: a BMC with a handful of session slots locks everyone out.
  (void)Logout();
}

std::string RedfishClient::AuthMode() const {
  switch (auth_) {
    case AuthState::kSession: return "session";
    case AuthState::kBasic: return "basic";
    default: return "";
  }
}

void RedfishClient::Note(const std::string& msg) const {
  if (options_.log) options_.log(options_.base_url + ": " + msg);
}

Status RedfishClient::Pause(std::chrono::milliseconds d) {
  const CancelSignal* cancel = options_.cancel;
  if (cancel && cancel->is_set()) return Cancelled("waiting");
  if (options_.sleep) {
    options_.sleep(d);   // tests: no time passes; the hook may set the signal
  } else if (cancel) {
    // One poll() on the signal's fd: the wait ends the moment the signal comes.
    if (WaitFd(-1, POLLIN, cancel, std::chrono::steady_clock::now() + d) == WaitResult::kCancelled)
      return Cancelled("waiting");
  } else {
    std::this_thread::sleep_for(d);
  }
  if (cancel && cancel->is_set()) return Cancelled("waiting");
  return OkStatus();
}

Diagnostic RedfishClient::Cancelled(const std::string& what) const {
  return Diagnostic::Error(kCancelledCode, Name() + ": stopped " + what + " (cancel signal)");
}

void RedfishClient::Report(const WaitProgress& p_in, const TaskWatch* watch) const {
  WaitProgress p = p_in;
  p.node = options_.node;
  if (watch && watch->progress) watch->progress(p);
  if (options_.progress) options_.progress(p);
}

Result<std::string> RedfishClient::Url(std::string_view link) const {
  if (origin_.empty()) return Diagnostic::Error("bmc.url", origin_error_);
  return ResolveOnOrigin(origin_, origin_ + kServiceRoot, link);
}

void RedfishClient::AddAuth(HttpRequest& req) const {
  if (auth_ == AuthState::kSession && !token_.empty()) {
    req.headers.emplace_back("X-Auth-Token", token_);
  } else if (auth_ == AuthState::kBasic) {
    req.headers.emplace_back(
        "Authorization",
        "Basic " + Base64(options_.credentials.user + ":" + options_.credentials.password.Reveal()));
  }
}

Result<HttpResponse> RedfishClient::SendOnce(const Exchange& ex, const std::string& url) {
  HttpRequest req;
  req.method = ex.method;
  req.url = url;
  req.timeout = options_.request_timeout;
  req.headers = {{"Accept", "application/json"}, {"OData-Version", "4.0"}};
  if (!ex.body.empty()) req.headers.emplace_back("Content-Type", "application/json");
  for (const auto& h : ex.headers) req.headers.push_back(h);
  if (ex.auth) AddAuth(req);
  // A read can be abandoned on Ctrl-C; a write is left to finish (cut short, nobody would know
  // what the BMC did).
  if (ex.method == "GET") req.cancel = options_.cancel;
  req.body = ex.body;
  req.parts = ex.parts;
  return http_->Send(req);
}

Result<HttpResponse> RedfishClient::Send(const Exchange& ex_in) {
  Exchange ex = ex_in;
  if (ex.auth) {
    if (auto s = EnsureAuth(); !s.ok()) return s.error();
  }
  auto url = Url(ex.link);
  if (!url.ok()) return url.error();
  std::string target = url.value();
  bool relogged = false;
  int redirects = 0;
  for (int attempt = 1;; ++attempt) {
    auto backoff = std::min(options_.backoff_cap, options_.backoff * (1 << std::min(attempt - 1, 10)));
    auto r = SendOnce(ex, target);
    if (!r.ok()) {
      const std::string& code = r.error().code;
      bool nothing_sent = code == "http.connect";
      bool retryable = code == "http.timeout" || code == "http.io" || nothing_sent;
      if (retryable && (ex.method == "GET" || nothing_sent) && attempt < options_.max_attempts) {
        Note("retrying " + ex.method + " " + PathOf(target) + " after " + code);
        if (auto p = Pause(backoff); !p.ok()) return p.error();
        continue;
      }
      return r;
    }
    HttpResponse& resp = r.value();
    if (resp.status == 503 && attempt < options_.max_attempts) {
      // Busy, or out of sessions (iDRAC RAC0218): the request was not processed.
      Note("HTTP 503 on " + PathOf(target) + ", retrying");
      if (auto p = Pause(RetryAfter(resp, backoff, options_.backoff_cap)); !p.ok()) return p.error();
      continue;
    }
    if (resp.status == 401 && ex.auth && auth_ == AuthState::kSession && !relogged) {
      // The session expired (SessionTimeout): log in again once and retry.
      relogged = true;
      token_.clear();
      session_link_.clear();
      auth_ = AuthState::kNone;
      if (auto s = EnsureAuth(); !s.ok()) return s.error();
      --attempt;
      continue;
    }
    if ((resp.status == 301 || resp.status == 302 || resp.status == 303 || resp.status == 307 ||
         resp.status == 308) && !resp.Header("location").empty()) {
      if (++redirects > kMaxRedirects) {
        return Diagnostic::Error("bmc.redirect", Name() + ": too many redirects at " + PathOf(target));
      }
      // Follow for GET and POST alike (iLO adds the trailing slash, Supermicro redirects the
      // session POST); the method and body are kept except for 303. Only on our own host:port:
      // reading the redirected path there would answer with whatever lives at that path on
      // this BMC, and following it to the other host would hand it our credentials.
      auto to = ResolvedOrigin(target, resp.Header("location"));
      auto ours = ResolvedOrigin(origin_, origin_);
      if (!to.ok()) return to.error();
      if (!ours.ok()) return ours.error();
      if (to.value() != ours.value()) {
        return Diagnostic::Error(
            "bmc.redirect.cross-host",
            Name() + ": " + ex.method + " " + PathOf(target) + " answered " +
                std::to_string(resp.status) + " redirecting to another host (" + to.value() +
                "); not followed",
            {}, {},
            "plumb talks only to the BMC address the inventory names, and sends its credentials "
            "nowhere else; if that host is this BMC (its own name or address), put it in the "
            "node's bmc:");
      }
      auto next = ResolveOnOrigin(origin_, target, resp.Header("location"));
      if (!next.ok()) return next.error();
      target = next.value();
      if (resp.status == 303) {
        ex.method = "GET";
        ex.body.clear();
        ex.parts.clear();
      }
      --attempt;
      continue;
    }
    return r;
  }
}

Status RedfishClient::EnsureAuth() {
  if (auth_ != AuthState::kNone) return OkStatus();
  if (options_.auth == BmcAuth::kBasic) {
    auth_ = AuthState::kBasic;
    return OkStatus();
  }
  if (login_error_) return *login_error_;
  Status s = Login();
  if (!s.ok()) login_error_ = s.error();
  return s;
}

Status RedfishClient::Login() {
  auto root = ServiceRoot();
  if (!root.ok()) return root.error();
  std::string sessions = LinkOf(root.value().value("Links", Json::object()), "Sessions");
  auto fallback = [&](const std::string& why) -> Status {
    if (options_.auth == BmcAuth::kSession) {
      return Diagnostic::Error("bmc.auth", Name() + ": session login unavailable: " + why);
    }
    Note("session login unavailable (" + why + "); using Basic authentication");
    auth_ = AuthState::kBasic;
    return OkStatus();
  };
  if (sessions.empty()) return fallback("the service root has no Links.Sessions");
  Exchange ex;
  ex.method = "POST";
  ex.link = sessions;
  // No Authorization header on the login itself: some BMCs answer 415 to one.
  ex.auth = false;
  ex.body = Json{{"UserName", options_.credentials.user},
                 {"Password", options_.credentials.password.Reveal()}}.dump();
  auto r = Send(ex);
  if (!r.ok()) return r.error();
  const HttpResponse& resp = r.value();
  if (resp.status == 401 || resp.status == 403) {
    return Diagnostic::Error("bmc.auth",
                             Name() + ": login refused (HTTP " + std::to_string(resp.status) +
                                 ") for user '" + options_.credentials.user + "'",
                             {}, {}, "check the BMC credentials reference");
  }
  if (resp.status == 404 || resp.status == 405 || resp.status == 501) {
    return fallback("POST Sessions answered HTTP " + std::to_string(resp.status));
  }
  // A BMC's words about a failed login may quote the request, password included (a 400 "The
  // value '...' for the property Password ..."): HttpError scrubs them.
  if (!Is2xx(resp.status)) return HttpError("POST", sessions, resp);
  std::string token = resp.Header("x-auth-token");
  if (token.empty()) return fallback("no X-Auth-Token in the login response");
  token_ = token;
  auth_ = AuthState::kSession;
  // Location first; some services only put the session's @odata.id in the body.
  std::string where = resp.Header("location");
  if (where.empty()) where = ParseBody(resp.body).value("@odata.id", "");
  if (where.empty()) {
    Note("login response has neither Location nor @odata.id: this session cannot be deleted");
  } else {
    auto u = ResolveOnOrigin(origin_, origin_ + sessions, where);
    if (u.ok()) session_link_ = PathOf(u.value());
  }
  return OkStatus();
}

Status RedfishClient::Logout() {
  if (token_.empty()) return OkStatus();
  std::string link = session_link_;
  Status result = OkStatus();
  if (!link.empty()) {
    auto url = Url(link);
    if (url.ok()) {
      HttpRequest req;
      req.method = "DELETE";
      req.url = url.value();
      req.timeout = options_.request_timeout;
      req.headers = {{"Accept", "application/json"}, {"OData-Version", "4.0"},
                     {"X-Auth-Token", token_}};
      auto r = http_->Send(req);
      if (!r.ok()) {
        result = r.error();
      } else if (!Is2xx(r.value().status) && r.value().status != 404) {
        result = HttpError("DELETE", link, r.value());
      }
    }
  }
  token_.clear();
  session_link_.clear();
  auth_ = AuthState::kNone;
  if (!result.ok()) Note("logout failed: " + result.error().message);
  return result;
}

BmcResponse RedfishClient::ToBmcResponse(const HttpResponse& r) const {
  BmcResponse out;
  out.status = r.status;
  out.body = ParseBody(r.body);
  std::string loc = r.Header("location");
  if (!loc.empty()) {
    auto u = ResolveOnOrigin(origin_, origin_ + kServiceRoot, loc);
    if (u.ok()) out.location = PathOf(u.value());
  }
  out.etag = r.Header("etag");
  if (out.etag.empty() && out.body.is_object()) out.etag = out.body.value("@odata.etag", "");
  for (const auto& m : ExtractMessages(out.body)) out.messages.push_back(m.ToString());
  return out;
}

Diagnostic RedfishClient::HttpError(const std::string& method, std::string_view link,
                                    const HttpResponse& r) const {
  std::string detail = DescribeError(ParseBody(r.body));
  std::string msg = Name() + ": " + method + " " + std::string(link) + ": HTTP " +
                    std::to_string(r.status) + (detail.empty() ? "" : ": " + detail);
  std::string hint;
  for (const auto& m : ExtractMessages(ParseBody(r.body))) {
    // "None." is the registries' way of saying there is no advice: not a hint.
    if (HasResolution(m)) { hint = m.resolution; break; }
  }
  return Diagnostic::Error("bmc.http." + std::to_string(r.status), Scrub(std::move(msg)), {}, {},
                           Scrub(std::move(hint)));
}

std::string RedfishClient::Scrub(std::string text) const {
  // What a BMC says is copied into errors; it must never carry our secrets back out.
  const std::string password = options_.credentials.password.Reveal();
  for (const std::string* secret : {&password, &token_}) {
    if (secret->empty()) continue;
    if (secret->size() < 4) return "(the BMC's message is not shown: it could hold a secret)";
    for (size_t at = text.find(*secret); at != std::string::npos; at = text.find(*secret, at))
      text.replace(at, secret->size(), "<redacted>");
  }
  return text;
}

Result<Json> RedfishClient::ServiceRoot() {
  if (root_) return *root_;
  Exchange ex;
  ex.link = kServiceRoot;
  ex.auth = false;   // readable without credentials by definition
  auto r = Send(ex);
  if (!r.ok()) return r.error();
  if (!Is2xx(r.value().status)) return HttpError("GET", kServiceRoot, r.value());
  Json body = ParseBody(r.value().body);
  if (!body.is_object()) {
    return Diagnostic::Error("bmc.payload", Name() + ": the service root is not a JSON object");
  }
  root_ = body;
  return body;
}

Result<BmcResponse> RedfishClient::GetRaw(std::string_view link) {
  Exchange ex;
  ex.link = std::string(link);
  auto r = Send(ex);
  if (!r.ok()) return r.error();
  return ToBmcResponse(r.value());
}

Result<Json> RedfishClient::Get(std::string_view link) {
  Exchange ex;
  ex.link = std::string(link);
  auto r = Send(ex);
  if (!r.ok()) return r.error();
  if (!Is2xx(r.value().status)) return HttpError("GET", link, r.value());
  Json body = ParseBody(r.value().body);
  if (body.is_null()) {
    return Diagnostic::Error("bmc.payload", Name() + ": GET " + std::string(link) +
                                                ": the response is not JSON");
  }
  return body;
}

std::vector<Result<Json>> RedfishClient::GetMany(const std::vector<std::string>& links) {
  std::vector<Result<Json>> out;
  if (links.empty()) return out;
  if (auto s = EnsureAuth(); !s.ok()) {
    for (size_t i = 0; i < links.size(); ++i) out.push_back(s.error());
    return out;
  }
  std::vector<HttpRequest> reqs;
  std::vector<bool> valid(links.size(), true);
  for (size_t i = 0; i < links.size(); ++i) {
    auto u = Url(links[i]);
    HttpRequest req;
    req.url = u.ok() ? u.value() : origin_ + kServiceRoot;
    valid[i] = u.ok();
    req.timeout = options_.request_timeout;
    req.headers = {{"Accept", "application/json"}, {"OData-Version", "4.0"}};
    AddAuth(req);
    reqs.push_back(std::move(req));
  }
  auto results = http_->SendAll(reqs);
  for (size_t i = 0; i < links.size(); ++i) {
    auto& r = results[i];
    bool ok_first = valid[i] && r.ok() && r.value().status == 200 && !ParseBody(r.value().body).is_null();
    if (ok_first) {
      out.push_back(ParseBody(r.value().body));
    } else {
      // Anything unusual (503, redirect, 401, transport error) goes the careful, serial way.
      out.push_back(Get(links[i]));
    }
  }
  return out;
}

Result<std::vector<Json>> RedfishClient::GetCollection(std::string_view link) {
  auto root = ServiceRoot();
  if (!root.ok()) return root.error();
  const Json& features = root.value().value("ProtocolFeaturesSupported", Json::object());
  const Json& expand = features.value("ExpandQuery", Json::object());
  bool can_expand = options_.use_expand && !expand_disabled_ && expand.is_object() &&
                    (expand.value("Levels", false) || expand.value("ExpandAll", false));

  std::string first(link);
  Json page;
  if (can_expand) {
    std::string q = first + (first.find('?') == std::string::npos ? "?" : "&") +
                    "$expand=.($levels=1)";
    auto r = GetRaw(q);
    if (!r.ok()) return r.error();
    if (r.value().status == 200 && r.value().body.is_object()) {
      page = r.value().body;
    } else {
      auto msgs = ExtractMessages(r.value().body);
      if (r.value().status == 400 || r.value().status == 501) {
        expand_disabled_ = true;   // remembered for this BMC
        Note("$expand refused (HTTP " + std::to_string(r.value().status) +
             "); walking links instead");
      } else {
        HttpResponse fake;
        fake.status = r.value().status;
        fake.body = r.value().body.is_null() ? "" : r.value().body.dump();
        return HttpError("GET", q, fake);
      }
    }
  }
  if (page.is_null()) {
    auto r = Get(first);
    if (!r.ok()) return r.error();
    page = r.value();
  }

  std::vector<Json> members;              // full objects, in order
  std::vector<size_t> pending_index;      // members that are links only
  std::vector<std::string> pending_links;
  std::set<std::string> seen{first};
  for (int pages = 0;; ++pages) {
    if (!page.is_object() || !page.contains("Members") || !page["Members"].is_array()) {
      return Diagnostic::Error("bmc.payload",
                               Name() + ": " + std::string(link) + " is not a collection");
    }
    for (const auto& m : page["Members"]) {
      if (!m.is_object()) continue;
      if (m.size() == 1 && m.contains("@odata.id")) {
        pending_index.push_back(members.size());
        pending_links.push_back(m["@odata.id"].get<std::string>());
        members.push_back(nullptr);
      } else {
        members.push_back(m);
      }
    }
    std::string next = page.value("Members@odata.nextLink", "");
    if (next.empty()) break;
    if (!seen.insert(next).second || pages >= kMaxPages) {
      Note("collection " + std::string(link) + " repeats a nextLink; stopping there");
      break;
    }
    auto r = Get(next);
    if (!r.ok()) return r.error();
    page = r.value();
  }
  auto fetched = GetMany(pending_links);
  for (size_t i = 0; i < fetched.size(); ++i) {
    if (!fetched[i].ok()) return fetched[i].error();
    members[pending_index[i]] = std::move(fetched[i].value());
  }
  return members;
}

Result<std::vector<std::string>> RedfishClient::SystemLinks() {
  if (system_links_) return *system_links_;
  auto root = ServiceRoot();
  if (!root.ok()) return root.error();
  std::string systems = LinkOf(root.value(), "Systems");
  if (systems.empty()) {
    return Diagnostic::Error("bmc.payload", Name() + ": the service root has no Systems");
  }
  auto coll = Get(systems);
  if (!coll.ok()) return coll.error();
  std::vector<std::string> links;
  for (const auto& m : coll.value().value("Members", Json::array())) {
    if (m.is_object() && m.contains("@odata.id") && m["@odata.id"].is_string()) {
      links.push_back(m["@odata.id"].get<std::string>());
    }
  }
  system_links_ = links;
  return links;
}

Result<std::string> RedfishClient::SystemLink() {
  if (!system_link_.empty()) return system_link_;
  auto links = SystemLinks();
  if (!links.ok()) return links.error();
  auto chosen = SelectSystem(links.value(), options_.system, Name(), options_.node);
  if (!chosen.ok()) return chosen.error();
  system_link_ = chosen.value();
  return system_link_;
}

Result<BmcResponse> RedfishClient::Patch(std::string_view link, const Json& body) {
  // The ETag of the resource we are about to modify (not of its parent).
  auto read_etag = [&]() -> std::string {
    auto r = GetRaw(link);
    if (!r.ok() || !Is2xx(r.value().status)) return {};   // PATCH-only resources (AMI Bios/SD)
    return r.value().etag;
  };
  std::string etag = read_etag();
  auto patch = [&](const std::string& if_match) -> Result<HttpResponse> {
    Exchange ex;
    ex.method = "PATCH";
    ex.link = std::string(link);
    ex.body = body.dump();
    if (!if_match.empty()) ex.headers.emplace_back("If-Match", if_match);
    return Send(ex);
  };
  auto r = patch(etag);
  if (!r.ok()) return r.error();
  if (r.value().status == 428) {
    // The service requires If-Match (Lenovo, AMI).
    etag = read_etag();
    Note("PATCH " + std::string(link) + " requires If-Match; resending with " +
         (etag.empty() ? "\"*\"" : "the resource's ETag"));
    r = patch(etag.empty() ? "*" : etag);
    if (!r.ok()) return r.error();
  } else if (r.value().status == 412) {
    // Stale (someone changed it) or spurious (iDRAC): re-read and retry once.
    etag = read_etag();
    Note("PATCH " + std::string(link) + " got 412; re-read the ETag and retrying once");
    r = patch(etag);
    if (!r.ok()) return r.error();
  }
  const HttpResponse& resp = r.value();
  if (!Is2xx(resp.status)) return HttpError("PATCH", link, resp);
  // A 2xx is a success unless it carries a Critical message (iLO's 200 + "error" object with
  // SystemResetRequired is a success).
  Json parsed = ParseBody(resp.body);
  for (const auto& m : ExtractMessages(parsed)) {
    if (m.severity == "Critical" && !HasMessageKey({m}, "SystemResetRequired") &&
        !HasMessageKey({m}, "Success")) {
      return HttpError("PATCH", link, resp);
    }
  }
  return ToBmcResponse(resp);
}

Result<TaskOutcome> RedfishClient::PostAction(std::string_view target, const Json& body,
                                              const TaskWatch& watch) {
  Exchange ex;
  ex.method = "POST";
  ex.link = std::string(target);
  ex.body = body.dump();   // never If-Match on an action (iDRAC answers 412 to it)
  auto r = Send(ex);
  if (!r.ok()) return r.error();
  if (!Is2xx(r.value().status)) return HttpError("POST", target, r.value());
  return FollowTask(r.value(), watch);
}

Result<TaskOutcome> RedfishClient::PostMultipart(std::string_view uri, const Json& params,
                                                 const std::string& file, const TaskWatch& watch) {
  Exchange ex;
  ex.method = "POST";
  ex.link = std::string(uri);
  std::string name = file.substr(file.find_last_of('/') == std::string::npos
                                     ? 0 : file.find_last_of('/') + 1);
  ex.parts = {{"UpdateParameters", "application/json", params.dump(), "", ""},
              {"UpdateFile", "application/octet-stream", "", file, name}};
  auto r = Send(ex);
  if (!r.ok()) return r.error();
  if (!Is2xx(r.value().status)) return HttpError("POST", uri, r.value());
  return FollowTask(r.value(), watch);
}

Result<TaskOutcome> RedfishClient::FollowTask(const HttpResponse& first, const TaskWatch& watch) {
  TaskOutcome out;
  out.http_status = first.status;
  BmcResponse resp = ToBmcResponse(first);
  BodyMessages(resp.body, out);
  out.final_body = resp.body;
  std::string monitor = first.status == 202 ? resp.location : "";
  out.monitor = monitor;
  if (IsTask(resp.body)) {
    // The task in the body (Supermicro), with or without a Location.
    out.task_link = resp.body.value("@odata.id", "");
    out.state = resp.body.value("TaskState", "");
    TaskMessages(resp.body, out);
  }
  if (monitor.empty() && out.task_link.empty()) {
    if (first.status == 202) {
      // Accepted, and nothing says where it goes from here.
      out.unknown = "HTTP 202 Accepted without a task monitor or a task to follow";
      Note(out.unknown);
    }
    return out;   // synchronous: 200/204 with no task
  }
  out.had_task = true;
  if (watch.accepted) watch.accepted(out.task_link, monitor);
  if (Terminal(out.state)) {
    out.task_status = resp.body.value("TaskStatus", "");
    return out;
  }
  return PollTask(std::move(out), monitor,
                  RetryAfter(first, options_.task_poll, options_.backoff_cap), watch);
}

Result<TaskOutcome> RedfishClient::FollowTaskLink(const std::string& task_link,
                                                  const std::string& monitor,
                                                  const TaskWatch& watch) {
  TaskOutcome out;
  out.had_task = true;
  out.task_link = task_link;
  out.monitor = monitor;
  if (task_link.empty() && monitor.empty()) {
    return Diagnostic::Error("bmc.task", Name() + ": no task link to follow");
  }
  return PollTask(std::move(out), monitor, std::chrono::milliseconds(0), watch);
}

Result<TaskOutcome> RedfishClient::PollTask(TaskOutcome out, std::string monitor,
                                            std::chrono::milliseconds first_wait,
                                            const TaskWatch& watch) {
  using std::chrono::milliseconds;
  // Answers in a row that told nothing (transport errors, 5xx, a body that is not JSON): a
  // BMC rebooting into its new firmware, or answering one poll with a 500, has not ended the
  // task. Past the budget the end is unknown: the caller checks what it can.
  int errors = 0;
  std::string last_problem;
  int percent = -1;
  milliseconds waited{0};
  milliseconds wait = first_wait;
  const milliseconds limit = options_.task_deadline;
  auto what = [&] { return "task " + (out.task_link.empty() ? monitor : out.task_link); };
  auto report = [&](const std::string& state) {
    Report({WaitProgress::Kind::kTask, "", what(), state, percent, waited, limit}, &watch);
  };
  auto read_task = [&](const Json& task) {
    if (out.task_link.empty()) out.task_link = task.value("@odata.id", "");
    out.state = task.value("TaskState", "");
    out.task_status = task.value("TaskStatus", "");
    if (task.contains("PercentComplete") && task["PercentComplete"].is_number_integer())
      percent = task["PercentComplete"].get<int>();
    TaskMessages(task, out);
    out.final_body = task;
  };
  auto too_many = [&](const std::string& problem, int budget) {
    last_problem = problem;
    if (++errors <= budget) {
      Note(what() + ": " + problem + "; asking again (" + std::to_string(errors) + " of " +
           std::to_string(budget) + " in a row)");
      return false;
    }
    return true;
  };
  for (;;) {
    if (waited >= limit) {
      std::string state = out.state.empty() ? "no answer" : out.state;
      if (percent >= 0) state += " " + std::to_string(percent) + "%";
      if (!last_problem.empty() && errors > 0) state += ", then " + last_problem;
      return Diagnostic::Error(
          "bmc.task.timeout",
          Name() + ": gave up waiting for " + what() + " after " + DurationText(limit) +
              " (last: " + state + "); the BMC may still be working on it",
          {}, {},
          "a longer --task-timeout if the update is known to take that long; `plumb bmc plan` "
          "shows the version once it is done");
    }
    if (auto p = Pause(wait); !p.ok()) {
      return Diagnostic::Error(kCancelledCode,
                               Name() + ": stopped waiting for " + what() + " (" +
                                   (out.state.empty() ? "no answer yet" : out.state) +
                                   "): the BMC carries on with it");
    }
    const auto t0 = std::chrono::steady_clock::now();
    waited += wait;
    wait = options_.task_poll;
    const std::string link = monitor.empty() ? out.task_link : monitor;
    Exchange ex;
    ex.link = link;
    auto r = Send(ex);
    waited += std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0);
    if (!r.ok()) {
      if (r.error().code == kCancelledCode) {
        return Diagnostic::Error(kCancelledCode, Name() + ": stopped waiting for " + what() +
                                                     ": the BMC carries on with it");
      }
      // The BMC may be rebooting into its new firmware: keep polling within a budget.
      if (too_many(r.error().code + " (" + r.error().message + ")", options_.task_error_budget))
        return r.error();
      report("unreachable (" + r.error().code + ")");
      continue;
    }
    const HttpResponse& hr = r.value();
    out.http_status = hr.status;
    Json body = ParseBody(hr.body);
    const bool unreadable = !hr.body.empty() && body.is_null();
    if (hr.status >= 500) {
      // Not the task's end: a monitor that fails one poll (busy, restarting its web server) has
      // been seen to complete the update after all.
      std::string detail = DescribeError(body);
      if (too_many("HTTP " + std::to_string(hr.status) + (detail.empty() ? "" : " (" + detail + ")"),
                   options_.task_error_budget)) {
        out.unknown = "the task monitor answered " + last_problem + ", " +
                      std::to_string(errors) + " times in a row";
        return out;
      }
      wait = RetryAfter(hr, options_.task_poll, options_.backoff_cap);
      report("HTTP " + std::to_string(hr.status));
      continue;
    }
    if (hr.status == 202) {
      errors = 0;
      wait = RetryAfter(hr, options_.task_poll, options_.backoff_cap);
      if (IsTask(body)) read_task(body);
      report(out.state.empty() ? "Running" : out.state);
      continue;
    }
    if (hr.status == 404 || hr.status == 410) {
      if (!monitor.empty() && !out.task_link.empty() && link == monitor) {
        monitor.clear();   // the monitor is gone (Dell deletes it): read the Task itself
        wait = milliseconds(0);
        continue;
      }
      // Gone before its end was read: it may have ended either way.
      Note(what() + " is gone (HTTP " + std::to_string(hr.status) + ") before its end was read");
      out.unknown = link + " answered HTTP " + std::to_string(hr.status) +
                    " (deleted) before the task's end was read";
      return out;
    }
    if (Is2xx(hr.status) && unreadable) {
      // A body cut short tells nothing: read the Task itself if the monitor gave one; else ask
      // again, and past the budget the end is unknown.
      const std::string problem = "HTTP " + std::to_string(hr.status) + " with a body that is not JSON (" +
                                  std::to_string(hr.body.size()) + " bytes: cut short?)";
      if (!monitor.empty() && !out.task_link.empty() && link == monitor) {
        Note(what() + ": the monitor answered " + problem + "; reading the Task instead");
        monitor.clear();
        wait = milliseconds(0);
        continue;
      }
      // A body cut short is seldom transient: a few looks, not the whole budget.
      if (too_many(problem, kUnreadableBudget)) {
        out.unknown = link + " answered " + problem + ", " + std::to_string(errors) + " times in a row";
        return out;
      }
      report("unreadable answer");
      continue;
    }
    errors = 0;
    if (Is2xx(hr.status)) {
      if (IsTask(body)) {
        read_task(body);
        // Completion is decided by TaskState alone (PercentComplete can reach 100 early).
        if (Terminal(out.state)) return out;
        report(out.state);
        continue;
      }
      // The monitor returned the operation's final response.
      out.state = "Completed";
      out.final_body = body;
      BodyMessages(body, out);
      return out;
    }
    // The operation's final response is an error (a 4xx): the task failed.
    out.state = "Exception";
    out.final_body = body;
    BodyMessages(body, out);
    return out;
  }
}

Result<std::string> RedfishClient::WaitPower(std::string_view system_link, const std::string& want,
                                             std::chrono::milliseconds deadline) {
  using std::chrono::milliseconds;
  milliseconds waited{0};
  std::string state;
  const milliseconds limit = deadline;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    auto sys = Get(system_link);
    waited += std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0);
    if (sys.ok()) {
      state = sys.value().value("PowerState", "");
      if (state == want) return state;
    } else if (sys.error().code == kCancelledCode) {
      return Diagnostic::Error(kCancelledCode, Name() + ": stopped waiting for PowerState " + want +
                                                   " (now '" + state + "')");
    }
    Report({WaitProgress::Kind::kPower, "", "PowerState " + want, state, -1, waited, limit},
           nullptr);
    if (waited >= limit) break;
    if (auto p = Pause(options_.power_poll); !p.ok()) {
      return Diagnostic::Error(kCancelledCode, Name() + ": stopped waiting for PowerState " + want +
                                                   " (now '" + state + "')");
    }
    waited += options_.power_poll;
  }
  return Diagnostic::Error("bmc.reset.timeout",
                           Name() + ": PowerState stayed '" + state + "' for " + DurationText(limit) +
                               ", expected '" + want + "'",
                           {}, {}, "a longer --power-timeout if this system takes that long");
}

Result<std::string> RedfishClient::Reset(std::string_view system_link, ResetKind kind) {
  auto sys = Get(system_link);
  if (!sys.ok()) return sys.error();
  const Json& actions = sys.value().value("Actions", Json::object());
  if (!actions.is_object() || !actions.contains("#ComputerSystem.Reset")) {
    return Diagnostic::Error("bmc.reset.unsupported",
                             Name() + ": " + std::string(system_link) + " has no Reset action");
  }
  auto spec = ReadActionSpec(*this, actions["#ComputerSystem.Reset"]);
  if (!spec.ok()) return spec.error();
  std::string target = spec.value().target;
  std::vector<std::string> allowable;
  if (const ActionParameter* p = spec.value().Find("ResetType")) allowable = p->allowable;
  std::string power = sys.value().value("PowerState", "");
  auto candidates = ResetCandidates(kind, allowable, power);
  if (candidates.size() == 1 && candidates[0].empty()) return std::string("none (already " + power + ")");
  if (candidates.empty()) {
    std::string list;
    for (const auto& a : allowable) list += (list.empty() ? "" : ", ") + a;
    return Diagnostic::Error("bmc.reset.unsupported",
                             Name() + ": no ResetType for '" + ResetKindName(kind) +
                                 "' among the advertised [" + list + "]");
  }
  auto contains = [&](const std::string& t) {
    return allowable.empty() || std::find(allowable.begin(), allowable.end(), t) != allowable.end();
  };
  Diagnostic last = Diagnostic::Error("bmc.reset", "no reset attempted");
  for (const auto& seq : candidates) {
    std::string sent, why;
    bool refused = false;
    for (size_t i = 0; i < seq.size(); ++i) {
      auto r = PostAction(target, Json{{"ResetType", seq[i]}});
      if (!r.ok()) {
        // Without an advertised list we guess: a 400 "not in list" moves to the next guess.
        if (allowable.empty() && i == 0 && r.error().code == "bmc.http.400") {
          last = r.error();
          refused = true;
          break;
        }
        return r.error();
      }
      // An end that could not be read is left to the power state to tell.
      if (r.value().Failed()) {
        return Diagnostic::Error("bmc.reset", Name() + ": reset " + r.value().EndText());
      }
      sent += (sent.empty() ? "" : "+") + seq[i];
      const bool then_on = i + 1 < seq.size();
      if (IsGracefulOff(seq[i])) {
        // The OS shuts down first; only when it has not powered off in time is it forced.
        auto w = WaitPower(system_link, "Off", options_.graceful_deadline);
        if (!w.ok() && contains("ForceOff")) {
          const std::string after =
              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(options_.graceful_deadline).count()) + " s";
          Note(seq[i] + " (graceful) had not powered " + std::string(system_link) + " off after " +
               after + "; sending ForceOff");
          auto f = PostAction(target, Json{{"ResetType", "ForceOff"}});
          if (!f.ok()) return f.error();
          sent += "+ForceOff";
          why = " (" + seq[i] + " had not powered it off after " + after + ")";
          w = WaitPower(system_link, "Off", options_.power_deadline);
        }
        if (!w.ok()) return w.error();
      } else if (then_on && seq[i] == "ForceOff") {
        auto w = WaitPower(system_link, "Off", options_.power_deadline);
        if (!w.ok()) return w.error();
      }
    }
    if (refused) continue;
    std::string want = (kind == ResetKind::kOff || kind == ResetKind::kForceOff) ? "Off" : "On";
    auto w = WaitPower(system_link, want, options_.power_deadline);
    if (!w.ok()) return w.error();
    return sent + why;
  }
  return last;
}

}  // namespace plumb::transport
