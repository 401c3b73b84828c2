#include "modules/transport/url.h"

#include <algorithm>
#include <cctype>
#include <memory>

#include <curl/curl.h>

namespace plumb::transport {
namespace {

struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using UrlPtr = std::unique_ptr<CURLU, UrlDeleter>;

std::string Part(CURLU* u, CURLUPart what) {
  char* s = nullptr;
  if (curl_url_get(u, what, &s, 0) != CURLUE_OK || !s) return {};
  std::string out(s);
  curl_free(s);
  return out;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

Result<std::string> ResolvedOrigin(std::string_view base_url, std::string_view reference) {
  UrlPtr u(curl_url());
  std::string base(base_url), ref(reference);
  if (curl_url_set(u.get(), CURLUPART_URL, base.c_str(), 0) != CURLUE_OK) {
    return Diagnostic::Error("bmc.url", "not a valid URL: '" + base + "'");
  }
  if (curl_url_set(u.get(), CURLUPART_URL, ref.c_str(), CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK) {
    return Diagnostic::Error("bmc.url", "BMC sent a link that is not a URI reference");
  }
  char* port = nullptr;
  std::string p;
  if (curl_url_get(u.get(), CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK && port) {
    p = port;
    curl_free(port);
  }
  return Lower(Part(u.get(), CURLUPART_SCHEME)) + "://" + Lower(Part(u.get(), CURLUPART_HOST)) +
         (p.empty() ? "" : ":" + p);
}

Result<std::string> OriginOf(std::string_view url) {
  UrlPtr u(curl_url());
  std::string s(url);
  if (curl_url_set(u.get(), CURLUPART_URL, s.c_str(), 0) != CURLUE_OK) {
    return Diagnostic::Error("bmc.url", "not a valid URL: '" + s + "'");
  }
  std::string scheme = Part(u.get(), CURLUPART_SCHEME);
  // Never echo a URL that carries a user or password: say what is wrong without it.
  if (!Part(u.get(), CURLUPART_USER).empty() || !Part(u.get(), CURLUPART_PASSWORD).empty()) {
    return Diagnostic::Error("bmc.url", "BMC URL for host '" + Part(u.get(), CURLUPART_HOST) +
                                            "' carries a user or password",
                             {}, {}, "credentials come from defaults.bmc.credentials (env:/file:)");
  }
  if (scheme != "https") {
    return Diagnostic::Error("bmc.url", "BMC URL must be https://...: '" + s + "'", {}, {},
                             "plain http would send the BMC password in clear text");
  }
  std::string host = Part(u.get(), CURLUPART_HOST);
  std::string port = Part(u.get(), CURLUPART_PORT);
  return scheme + "://" + host + (port.empty() ? "" : ":" + port);
}

std::string PathOf(std::string_view url) {
  UrlPtr u(curl_url());
  std::string s(url);
  if (curl_url_set(u.get(), CURLUPART_URL, s.c_str(), 0) != CURLUE_OK) return "/";
  std::string path = Part(u.get(), CURLUPART_PATH);
  std::string query = Part(u.get(), CURLUPART_QUERY);
  return path + (query.empty() ? "" : "?" + query);
}

Result<std::string> ResolveOnOrigin(std::string_view origin, std::string_view base_url,
                                    std::string_view reference) {
  UrlPtr u(curl_url());
  std::string base(base_url), ref(reference);
  if (curl_url_set(u.get(), CURLUPART_URL, base.c_str(), 0) != CURLUE_OK) {
    return Diagnostic::Error("bmc.url", "not a valid URL: '" + base + "'");
  }
  // With a base already set, CURLUPART_URL resolves `ref` relative to it (RFC 3986 5.2).
  if (curl_url_set(u.get(), CURLUPART_URL, ref.c_str(), CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK) {
    return Diagnostic::Error("bmc.url", "BMC sent a link that is not a URI reference: '" + ref +
                                            "'");
  }
  std::string path = Part(u.get(), CURLUPART_PATH);
  std::string query = Part(u.get(), CURLUPART_QUERY);
  if (path.empty()) path = "/";
  return std::string(origin) + path + (query.empty() ? "" : "?" + query);
}

}  // namespace plumb::transport
