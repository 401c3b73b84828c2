#pragma once
/// HttpClient: the seam under the Redfish client. One request in, one response (or a transport
/// error) out. The real one is libcurl (curl_http_client.h; curl/OpenSSL headers never leave its
/// .cc); unit tests script a FakeHttpClient (tests/fakes/fake_http_client.h).
///
/// The client never follows redirects and never retries: redirect handling, retries, auth and
/// ETags live above the seam (redfish_client.cc) so they are unit-tested with the fake.
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "schemas/result.h"

namespace plumb::transport {

class CancelSignal;   // cancel_signal.h

/// One part of a multipart/form-data body (DSP0266 "Multipart HTTP and HTTPS push updates").
struct MultipartPart {
  std::string name;           ///< "UpdateParameters", "UpdateFile", "OemParameters"
  std::string content_type;   ///< "application/json", "application/octet-stream"
  std::string data;           ///< inline content (used when `file` is empty)
  std::string file;           ///< local file streamed as the part's content
  std::string filename;       ///< filename= in Content-Disposition (files only)
};

struct HttpRequest {
  std::string method = "GET";    ///< GET, POST, PATCH, DELETE
  std::string url;               ///< absolute https URL
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;              ///< sent when non-empty (or for POST/PATCH)
  std::vector<MultipartPart> parts;   ///< non-empty: multipart/form-data instead of `body`
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  /// When set, the request is abandoned within about a second of the signal (error code
  /// kCancelledCode). Only for requests that change nothing (GET): a write cut short leaves the
  /// BMC in a state nobody knows.
  const CancelSignal* cancel = nullptr;
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;   ///< names lower-cased; last value wins
  std::string body;

  /// Header value by lower-case name, "" when absent.
  std::string Header(const std::string& lower_name) const;
};

/// Transport error codes: "http.timeout", "http.connect", "http.tls" (certificate refused),
/// "http.io" (anything else), kCancelledCode (the request's cancel signal came). The message never contains request headers or bodies.
class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual Result<HttpResponse> Send(const HttpRequest& request) = 0;
  /// Sends independent requests concurrently (the real client: all on the shared multi handle,
  /// bounded by its per-host connection limit); results in request order.
  virtual std::vector<Result<HttpResponse>> SendAll(const std::vector<HttpRequest>& requests);
};

}  // namespace plumb::transport
