#include "modules/transport/curl_http_client.h"

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "modules/transport/cancel_signal.h"

namespace plumb::transport {
namespace {

// Completion latch for one Send/SendAll call.
struct Batch {
  std::mutex mu;
  std::condition_variable cv;
  size_t remaining = 0;
};

struct Transfer {
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  curl_mime* mime = nullptr;
  HttpResponse response;
  CURLcode result = CURLE_OK;
  char errbuf[CURL_ERROR_SIZE] = {0};
  Batch* batch = nullptr;
  const CancelSignal* cancel = nullptr;   // the request's (HttpRequest::cancel)
};

void Finish(Transfer* t) {
  Batch* b = t->batch;
  std::lock_guard<std::mutex> lock(b->mu);
  if (--b->remaining == 0) b->cv.notify_all();
}

size_t WriteBody(char* data, size_t size, size_t n, void* user) {
  static_cast<Transfer*>(user)->response.body.append(data, size * n);
  return size * n;
}

size_t WriteHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string line(data, size * n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (line.rfind("HTTP/", 0) == 0) {
    t->response.headers.clear();   // a new response (after 100 Continue): start over
    return size * n;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  size_t v = colon + 1;
  while (v < line.size() && (line[v] == ' ' || line[v] == '\t')) ++v;
  t->response.headers[name] = line.substr(v);
  return size * n;
}

// Called by libcurl about once a second while a transfer lives (more often while data flows):
// a non-zero return aborts it (CURLE_ABORTED_BY_CALLBACK).
int AbortOnCancel(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const CancelSignal*>(user)->is_set() ? 1 : 0;
}

// ---- certificate fingerprint pinning (OpenSSL verify callback) ----

int PinIndex() {
  static int idx = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return idx;
}

// Pins are interned for the life of the process: a pooled connection's SSL_CTX may outlive the
// client that created it.
const std::string* InternPin(const std::string& raw) {
  static std::mutex mu;
  static std::set<std::string> pins;
  std::lock_guard<std::mutex> lock(mu);
  return &*pins.insert(raw).first;
}

int VerifyPinned(int /*preverify*/, X509_STORE_CTX* store) {
  auto* ssl = static_cast<SSL*>(
      X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  if (!ssl) return 0;
  auto* pin = static_cast<const std::string*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), PinIndex()));
  if (!pin) return 0;
  if (X509_STORE_CTX_get_error_depth(store) > 0) {
    // The pin names the leaf exactly; the chain above it is not what we trust.
    X509_STORE_CTX_set_error(store, X509_V_OK);
    return 1;
  }
  X509* cert = X509_STORE_CTX_get_current_cert(store);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!cert || !X509_digest(cert, EVP_sha256(), md, &len)) return 0;
  if (len != pin->size() || std::memcmp(md, pin->data(), len) != 0) {
    X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED);
    return 0;
  }
  X509_STORE_CTX_set_error(store, X509_V_OK);
  return 1;
}

CURLcode InstallPin(CURL*, void* ssl_ctx, void* user) {
  auto* ctx = static_cast<SSL_CTX*>(ssl_ctx);
  SSL_CTX_set_ex_data(ctx, PinIndex(), user);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, VerifyPinned);
  return CURLE_OK;
}

Diagnostic TransferError(const Transfer& t, const std::string& url) {
  std::string detail = t.errbuf[0] ? t.errbuf : curl_easy_strerror(t.result);
  std::string code = "http.io";
  switch (t.result) {
    case CURLE_OPERATION_TIMEDOUT: code = "http.timeout"; break;
    case CURLE_ABORTED_BY_CALLBACK: code = kCancelledCode; break;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST: code = "http.connect"; break;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH: code = "http.tls"; break;
    default: break;
  }
  if (code == kCancelledCode) detail = "abandoned on the cancel signal";
  std::string hint;
  if (code == "http.tls") {
    hint = "the BMC's certificate was not accepted: check bmc.ca / bmc.fingerprint";
  }
  return Diagnostic::Error(code, url + ": " + detail, {}, {}, hint);
}

}  // namespace

// ---- the engine: one multi handle, one thread ----

class CurlEngine {
 public:
  explicit CurlEngine(const CurlEngineOptions& o) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    multi_ = curl_multi_init();
    curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, o.max_host_connections);
    if (o.max_total_connections > 0) {
      curl_multi_setopt(multi_, CURLMOPT_MAX_TOTAL_CONNECTIONS, o.max_total_connections);
    }
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, o.max_cached_connections);
    thread_ = std::thread([this] { Loop(); });
  }
  ~CurlEngine() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    curl_multi_wakeup(multi_);
    thread_.join();
    curl_multi_cleanup(multi_);
  }

  void Submit(const std::vector<Transfer*>& transfers) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto* t : transfers) pending_.push_back(t);
    }
    curl_multi_wakeup(multi_);
  }

 private:
  void Loop() {
    int running = 0;
    for (;;) {
      std::deque<Transfer*> add;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_ && pending_.empty() && running == 0) break;
        add.swap(pending_);
      }
      for (auto* t : add) {
        curl_multi_add_handle(multi_, t->easy);
        active_.insert(t);
      }
      curl_multi_perform(multi_, &running);
      int queued = 0;
      while (CURLMsg* m = curl_multi_info_read(multi_, &queued)) {
        if (m->msg != CURLMSG_DONE) continue;
        Transfer* t = nullptr;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
        t->result = m->data.result;
        curl_multi_remove_handle(multi_, m->easy_handle);
        active_.erase(t);
        Finish(t);
      }
      // A request whose cancel signal came ends here, at the latest one poll (1 s) later:
      // libcurl calls the progress callback only while a transfer moves, and a BMC that does
      // not answer moves nothing.
      for (auto it = active_.begin(); it != active_.end();) {
        Transfer* t = *it;
        if (t->cancel == nullptr || !t->cancel->is_set()) {
          ++it;
          continue;
        }
        curl_multi_remove_handle(multi_, t->easy);
        t->result = CURLE_ABORTED_BY_CALLBACK;
        it = active_.erase(it);
        Finish(t);
      }
      curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
    }
  }

  CURLM* multi_ = nullptr;
  std::thread thread_;
  std::mutex mu_;
  std::deque<Transfer*> pending_;
  std::set<Transfer*> active_;   // added to the multi handle, not done yet (the loop's own)
  bool stop_ = false;
};

std::shared_ptr<CurlEngine> StartCurlEngine(const CurlEngineOptions& options) {
  return std::make_shared<CurlEngine>(options);
}

Result<std::string> ParseSha256Fingerprint(const std::string& text) {
  std::string hex = text;
  if (hex.rfind("sha256:", 0) == 0 || hex.rfind("SHA256:", 0) == 0) hex = hex.substr(7);
  hex.erase(std::remove(hex.begin(), hex.end(), ':'), hex.end());
  if (hex.size() != 64 || !std::all_of(hex.begin(), hex.end(), [](unsigned char c) {
        return std::isxdigit(c);
      })) {
    return Diagnostic::Error("bmc.fingerprint",
                             "fingerprint must be \"sha256:\" and 32 hex bytes, got '" + text + "'",
                             {}, "bmc.fingerprint",
                             "openssl x509 -in cert.pem -noout -fingerprint -sha256");
  }
  std::string raw;
  for (size_t i = 0; i < 64; i += 2) {
    raw.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return raw;
}

namespace {

class CurlHttpClient : public HttpClient {
 public:
  CurlHttpClient(std::shared_ptr<CurlEngine> engine, TlsOptions tls, const std::string* pin)
      : engine_(std::move(engine)), tls_(std::move(tls)), pin_(pin) {}

  Result<HttpResponse> Send(const HttpRequest& request) override {
    auto all = SendAll({request});
    return std::move(all.front());
  }

  std::vector<Result<HttpResponse>> SendAll(const std::vector<HttpRequest>& requests) override {
    Batch batch;
    batch.remaining = requests.size();
    std::vector<Transfer> transfers(requests.size());
    std::vector<Transfer*> submit;
    for (size_t i = 0; i < requests.size(); ++i) {
      Setup(requests[i], transfers[i]);
      transfers[i].batch = &batch;
      submit.push_back(&transfers[i]);
    }
    if (!submit.empty()) {
      engine_->Submit(submit);
      std::unique_lock<std::mutex> lock(batch.mu);
      batch.cv.wait(lock, [&] { return batch.remaining == 0; });
    }
    std::vector<Result<HttpResponse>> out;
    out.reserve(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      Transfer& t = transfers[i];
      if (t.result == CURLE_OK) {
        long code = 0;
        curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &code);
        t.response.status = static_cast<int>(code);
        out.push_back(std::move(t.response));
      } else {
        out.push_back(TransferError(t, requests[i].url));
      }
      curl_slist_free_all(t.headers);
      if (t.mime) curl_mime_free(t.mime);
      curl_easy_cleanup(t.easy);
    }
    return out;
  }

 private:
  void Setup(const HttpRequest& r, Transfer& t) {
    CURL* e = curl_easy_init();
    t.easy = e;
    curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(e, CURLOPT_URL, r.url.c_str());
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.errbuf);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
    // Redirects are followed above the seam, where our own host:port is kept.
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout.count()));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(std::min<long long>(r.timeout.count(), 15000)));
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    t.cancel = r.cancel;
    if (r.cancel) {
      curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
      curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, AbortOnCancel);
      curl_easy_setopt(e, CURLOPT_XFERINFODATA, const_cast<CancelSignal*>(r.cancel));
    }
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, WriteBody);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, WriteHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    if (pin_) {
      // The verify callback enforces the pin and fails the handshake on a mismatch.
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
      curl_easy_setopt(e, CURLOPT_SSL_CTX_FUNCTION, InstallPin);
      curl_easy_setopt(e, CURLOPT_SSL_CTX_DATA, const_cast<std::string*>(pin_));
    } else {
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
      if (!tls_.ca_file.empty()) {
        // This bundle only: Debian's libcurl also reads /etc/ssl/certs (its built-in CA path),
        // which would let any system CA vouch for a BMC's name.
        curl_easy_setopt(e, CURLOPT_CAINFO, tls_.ca_file.c_str());
        curl_easy_setopt(e, CURLOPT_CAPATH, nullptr);
      }
    }
    for (const auto& [k, v] : r.headers) {
      t.headers = curl_slist_append(t.headers, (k + ": " + v).c_str());
    }
    t.headers = curl_slist_append(t.headers, "Expect:");
    if (!r.parts.empty()) {
      t.mime = curl_mime_init(e);
      for (const auto& p : r.parts) {
        curl_mimepart* part = curl_mime_addpart(t.mime);
        curl_mime_name(part, p.name.c_str());
        if (!p.content_type.empty()) curl_mime_type(part, p.content_type.c_str());
        if (!p.file.empty()) {
          curl_mime_filedata(part, p.file.c_str());
          if (!p.filename.empty()) curl_mime_filename(part, p.filename.c_str());
        } else {
          curl_mime_data(part, p.data.data(), p.data.size());
        }
      }
      curl_easy_setopt(e, CURLOPT_MIMEPOST, t.mime);
      if (r.method != "POST") curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r.method.c_str());
    } else if (r.method == "GET") {
      curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else {
      if (r.method == "POST" || r.method == "PATCH" || !r.body.empty()) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, static_cast<long>(r.body.size()));
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.c_str());
      }
      if (r.method != "POST") curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r.method.c_str());
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.headers);
  }

  std::shared_ptr<CurlEngine> engine_;
  TlsOptions tls_;
  const std::string* pin_;
};

}  // namespace

std::unique_ptr<HttpClient> NewCurlHttpClient(std::shared_ptr<CurlEngine> engine,
                                              const TlsOptions& tls) {
  const std::string* pin = nullptr;
  if (!tls.fingerprint.empty()) {
    auto raw = ParseSha256Fingerprint(tls.fingerprint);
    // A malformed pin must never degrade to "no pin": an impossible pin refuses every peer.
    pin = InternPin(raw.ok() ? raw.value() : std::string("\0invalid-pin", 12));
  }
  return std::make_unique<CurlHttpClient>(std::move(engine), tls, pin);
}

}  // namespace plumb::transport
