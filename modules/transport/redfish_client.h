#pragma once
/// RedfishClient: the Bmc for one BMC over an HttpClient (libcurl in production, a fake in unit
/// tests). It owns at most one session, created on first use and ALWAYS deleted: by Logout(),
/// or by the destructor on every other path (errors, early returns, exceptions unwinding
/// through the owner). One client per BMC per run: BMCs have small session limits.
///
/// A client serves one node: on a BMC that manages several systems (an HPE Cray EX blade) it is
/// told the node's system (RedfishOptions::system, from inventory bmc_system) and SystemLink()
/// is that system; with several and none named, SystemLink() is an error listing them.
///
/// Redirects (301/302/303/307/308) are followed here, for GET and POST alike (the effect of
/// CURLOPT_FOLLOWLOCATION + CURLOPT_POSTREDIR), rather than by libcurl, and only on the
/// configured host:port: a Location on another host (by RFC 3986 resolution; host case and a
/// default port aside) is an error, bmc.redirect.cross-host, naming that host. The X-Auth-Token
/// or Basic credentials are never sent to another host, nothing is read from the redirected
/// path on this one, and the fake HttpClient can test it.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "modules/transport/bmc.h"
#include "modules/transport/cancel_signal.h"
#include "modules/transport/credentials.h"
#include "modules/transport/http_client.h"

namespace plumb::transport {

enum class BmcAuth {
  kAuto,      ///< a session if the service offers one (Links.Sessions), else Basic
  kSession,   ///< a session or fail
  kBasic,     ///< Authorization: Basic on every request (no session bookkeeping)
};

/// How long a firmware task may run before plumb gives up waiting: the longest flashes (an HGX
/// baseboard through its BMC) take 20-40 minutes.
inline constexpr std::chrono::minutes kDefaultTaskTimeout{45};
/// How long a reset may take to reach the PowerState it asked for.
inline constexpr std::chrono::minutes kDefaultPowerTimeout{5};

struct RedfishOptions {
  std::string base_url;          ///< "https://gpu001-bmc.pod-a.example" (a path is ignored)
  /// The node's ComputerSystem on this BMC (inventory bmc_system: its Id), "" = the only one.
  std::string system;
  std::string node;              ///< the plumb node this client serves (for messages only)
  Credentials credentials;
  BmcAuth auth = BmcAuth::kAuto;
  std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
  /// Retries of 503 (honouring Retry-After), timeouts and dropped connections (GET only; any
  /// method when the connection was refused, since nothing was sent).
  int max_attempts = 4;
  std::chrono::milliseconds backoff{std::chrono::milliseconds(500)};
  std::chrono::milliseconds backoff_cap{std::chrono::seconds(10)};
  /// Task monitors: poll interval when no Retry-After, how long a task may take (a firmware
  /// flash: tens of minutes; `--task-timeout`), and how many answers in a row that tell nothing
  /// are tolerated: transport errors and 5xx (the BMC may reboot during its own update, or
  /// answer one poll with a 500) before the task's end is unknown.
  std::chrono::milliseconds task_poll{std::chrono::seconds(2)};
  std::chrono::milliseconds task_deadline{kDefaultTaskTimeout};
  int task_error_budget = 30;
  /// Resets: how often and how long to wait for PowerState (`--power-timeout`).
  std::chrono::milliseconds power_poll{std::chrono::seconds(2)};
  std::chrono::milliseconds power_deadline{kDefaultPowerTimeout};
  /// How long a graceful off (GracefulShutdown, Cray's Off) may take before ForceOff is sent.
  std::chrono::milliseconds graceful_deadline{std::chrono::minutes(5)};
  /// Ends every wait (task, power, retry backoff) and abandons GETs in flight within about a
  /// second of being set (errors with code kCancelledCode). Owned by the caller; may be null.
  const CancelSignal* cancel = nullptr;
  /// Every wait's progress, after each look (the `plumb bmc` verbs print it); may be empty.
  std::function<void(const WaitProgress&)> progress;
  bool use_expand = true;        ///< only where ProtocolFeaturesSupported advertises it
  /// Notes for the operator (non-conformance, retries, fallbacks). Never given a secret.
  std::function<void(const std::string&)> log;
  /// How to wait (tests substitute a clock that does not sleep).
  std::function<void(std::chrono::milliseconds)> sleep;
};

class RedfishClient : public Bmc {
 public:
  RedfishClient(std::unique_ptr<HttpClient> http, RedfishOptions options);
  ~RedfishClient() override;
  RedfishClient(const RedfishClient&) = delete;
  RedfishClient& operator=(const RedfishClient&) = delete;

  /// Deletes the session (if any). Safe to call twice; the destructor calls it.
  Status Logout();
  /// True while a session token is held.
  bool HasSession() const { return !token_.empty(); }
  /// "session", "basic" or "" before the first authenticated request.
  std::string AuthMode() const;

  const std::string& Name() const override { return options_.base_url; }
  Result<Json> ServiceRoot() override;
  Result<Json> Get(std::string_view link) override;
  std::vector<Result<Json>> GetMany(const std::vector<std::string>& links) override;
  Result<BmcResponse> GetRaw(std::string_view link) override;
  Result<std::vector<Json>> GetCollection(std::string_view link) override;
  Result<std::vector<std::string>> SystemLinks() override;
  Result<std::string> SystemLink() override;
  Result<BmcResponse> Patch(std::string_view link, const Json& body) override;
  Result<TaskOutcome> PostAction(std::string_view target, const Json& body,
                                 const TaskWatch& watch = {}) override;
  Result<TaskOutcome> PostMultipart(std::string_view uri, const Json& update_parameters,
                                    const std::string& file, const TaskWatch& watch = {}) override;
  Result<TaskOutcome> FollowTaskLink(const std::string& task_link, const std::string& monitor,
                                     const TaskWatch& watch = {}) override;
  Status Pause(std::chrono::milliseconds d) override;
  Result<std::string> Reset(std::string_view system_link, ResetKind kind) override;

 private:
  enum class AuthState { kNone, kSession, kBasic };
  struct Exchange;   // one logical request: method, link, body, extra headers, auth

  Result<HttpResponse> Send(const Exchange& ex);
  Result<HttpResponse> SendOnce(const Exchange& ex, const std::string& url);
  Status EnsureAuth();
  Status Login();
  void AddAuth(HttpRequest& req) const;
  Result<std::string> Url(std::string_view link) const;
  BmcResponse ToBmcResponse(const HttpResponse& r) const;
  /// `text` with the password and the session token replaced by "<redacted>".
  std::string Scrub(std::string text) const;
  Diagnostic HttpError(const std::string& method, std::string_view link,
                       const HttpResponse& r) const;
  Result<TaskOutcome> FollowTask(const HttpResponse& first, const TaskWatch& watch);
  /// Polls `monitor` (or, without one, out.task_link) until the task ends, its end is
  /// unknown, the task timeout passes or the cancel signal comes.
  Result<TaskOutcome> PollTask(TaskOutcome out, std::string monitor,
                               std::chrono::milliseconds first_wait, const TaskWatch& watch);
  Result<std::string> WaitPower(std::string_view system_link, const std::string& want,
                                std::chrono::milliseconds deadline);
  void Note(const std::string& msg) const;
  void Report(const WaitProgress& p, const TaskWatch* watch) const;
  Diagnostic Cancelled(const std::string& what) const;

  std::unique_ptr<HttpClient> http_;
  RedfishOptions options_;
  std::string origin_;          // scheme://host:port we talk to, always
  std::string origin_error_;
  AuthState auth_ = AuthState::kNone;
  std::string token_;           // X-Auth-Token (a secret: never logged)
  std::string session_link_;    // where to DELETE it
  bool expand_disabled_ = false;
  std::optional<Diagnostic> login_error_;   // a failed login is not retried by every request
  std::optional<Json> root_;
  std::optional<std::vector<std::string>> system_links_;
  std::string system_link_;
};

}  // namespace plumb::transport
