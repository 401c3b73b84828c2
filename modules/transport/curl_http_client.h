#pragma once
/// The real HttpClient: libcurl's multi interface driven by one engine thread per process.
///
/// Every BMC client submits its requests to the shared CurlEngine; the engine runs them all on
/// one multi handle (keep-alive and TLS session reuse per host, CURLMOPT_MAX_HOST_CONNECTIONS as
/// the per-BMC connection limit) and wakes the caller when its transfer is done. The global
/// fan-out is how many callers (worker threads) submit at once; see plans/observe/bmc_gather.h.
///
/// TLS (one policy per BMC host; connections are reused per host):
///   - `ca_file`: the peer chain is verified against this CA bundle (CURLOPT_CAINFO) and the
///     host name against the certificate (CURLOPT_SSL_VERIFYHOST=2).
///   - `fingerprint` "sha256:AB:CD:..." (64 hex digits, colons optional): the SHA-256 digest of
///     the peer's leaf CERTIFICATE (DER) must equal it. Enforced in an OpenSSL verify callback
///     installed through CURLOPT_SSL_CTX_FUNCTION, which fails the handshake on a mismatch; the
///     chain and host name are not checked (the pin names the exact certificate). This is a
///     certificate pin, not a public-key pin (CURLOPT_PINNEDPUBLICKEY is not used).
///   - none of them: the system CA store.
/// There is no way to turn verification off: a BMC that cannot be verified is not talked to
/// (its credentials would go to whoever answers). https only; plain http is refused.
#include <memory>
#include <string>

#include "modules/transport/http_client.h"

namespace plumb::transport {

struct TlsOptions {
  std::string ca_file;
  std::string fingerprint;
};

class CurlEngine;

struct CurlEngineOptions {
  long max_host_connections = 4;    ///< per BMC (host:port): BMCs are small
  long max_total_connections = 0;   ///< 0 = unlimited (the gather's worker count bounds it)
  /// Idle connections kept for reuse; the oldest are closed beyond this. Enough for fan-out x
  /// per-host, small enough to stay far below the file-descriptor limit with 1024 BMCs.
  long max_cached_connections = 512;
};

/// Starts the engine thread. One per process is enough; it stops when the last user drops it.
std::shared_ptr<CurlEngine> StartCurlEngine(const CurlEngineOptions& options = {});

/// Parses a "sha256:AB:CD:..." fingerprint into 32 raw bytes, or says why it is malformed.
Result<std::string> ParseSha256Fingerprint(const std::string& text);

/// A client for one BMC with one TLS policy, submitting to `engine`.
std::unique_ptr<HttpClient> NewCurlHttpClient(std::shared_ptr<CurlEngine> engine,
                                              const TlsOptions& tls);

}  // namespace plumb::transport
